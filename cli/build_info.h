// What faultline was built from: its version (the CMake project version)
// and the git commit of the source tree, for `faultline --version` and
// every result a run writes. Defined in a source file generated at build
// time (cli/build_info.cmake): only that file is recompiled when the
// commit changes.
#pragma once

namespace faultline::cli {

const char* BuildVersion();  // "0.1.0"
const char* BuildCommit();   // 12 hex digits, or "unknown" outside git

}  // namespace faultline::cli
