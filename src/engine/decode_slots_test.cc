#include "engine/decode_slots.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

namespace qvl {
namespace {

TEST(DecodeSlots, AThirdDecodeWaitsForOneOfTwoSlots) {
  DecodeSlots slots(2);
  auto first = std::make_unique<DecodeSlots::Held>(slots);
  const DecodeSlots::Held second(slots);
  EXPECT_EQ(slots.free(), 0);
  std::atomic<bool> third_started{false};
  std::thread third([&] {
    const DecodeSlots::Held held(slots);
    third_started = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(third_started);
  first.reset();
  third.join();
  EXPECT_TRUE(third_started);
  EXPECT_EQ(slots.free(), 1);
}

TEST(DecodeSlots, ZeroSlotsStillDecodeOneAtATime) {
  DecodeSlots slots(0);
  EXPECT_EQ(slots.free(), 1);
  {
    const DecodeSlots::Held held(slots);
    EXPECT_EQ(slots.free(), 0);
  }
  EXPECT_EQ(slots.free(), 1);
}

}  // namespace
}  // namespace qvl
