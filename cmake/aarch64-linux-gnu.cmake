# Cross build for 64-bit ARM Linux with Debian's cross compiler (g++-aarch64-linux-gnu),
# whose programs run here under qemu user-mode emulation (qemu-user): ctest and
# add_test run them through CMAKE_CROSSCOMPILING_EMULATOR. The emulated CPU is chosen by
# the environment variable QEMU_CPU, which qemu-aarch64 reads itself (e.g. max,
# cortex-a57), so one build is tested on several CPU models without reconfiguring.
#   cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#     -DQVL_KERNELS_ONLY=ON
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# The cross libc and libstdc++ live here; qemu loads the dynamic linker and libraries
# from the same place (-L).
set(QVL_ARM_SYSROOT /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH ${QVL_ARM_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Cached: scripts/check_arm.sh --run reads it from the build folder to run the tests.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${QVL_ARM_SYSROOT}
    CACHE STRING "Runs the aarch64 programs built here")
