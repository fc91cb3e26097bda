// Factories of the built-in models (see checkers/model.h). Internal to the
// checkers library: callers use MakeModel(name).
#pragma once

#include <memory>

#include "checkers/model.h"

namespace faultline::checkers::models {

// One register per key, initially null: read, write (and cas when
// `with_cas`). A failed op never reaches the model.
std::unique_ptr<Model> MakeRegister(bool with_cas);
// String cells per key, missing key reads "": get, put, append.
std::unique_ptr<Model> MakeKv();
// One lock per key: acquire, release (no owner tracking: any release of a
// held lock frees it).
std::unique_ptr<Model> MakeMutex();

}  // namespace faultline::checkers::models
