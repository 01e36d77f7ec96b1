// How a tower gets the LinearWeight of each checkpoint matrix it multiplies with: from
// the packed-weight cache when there is one, else prepared on the spot. The towers only
// say which matrix; the model decides the format (see ModelOptions).
#pragma once

#include <functional>

#include "ops/linear.h"
#include "ops/weight_view.h"

namespace qvl {

using LinearPreparer = std::function<LinearWeight(const WeightView& view)>;

}  // namespace qvl
