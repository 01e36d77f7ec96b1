#include "base/build_info.h"

#include "build_info_name.h"

namespace qvl {

const char* BuildInfo() { return QVL_BUILD_INFO; }

}  // namespace qvl
