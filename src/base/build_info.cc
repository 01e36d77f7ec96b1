#include "base/build_info.h"

namespace qvl {

const char* BuildInfo() { return QVL_BUILD_INFO; }

}  // namespace qvl
