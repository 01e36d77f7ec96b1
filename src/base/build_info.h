// The build's name: the commit it was built at, as `git describe --always --dirty`
// gives it ("qvl-1352040", "qvl-1352040-dirty"; "qvl-unknown" outside a git checkout).
// llama-server's build_info in /props, `qvl --version` and `qvl bench`'s report name it.
#pragma once

namespace qvl {

const char* BuildInfo();

}  // namespace qvl
