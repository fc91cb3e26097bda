// Verdict helpers: names, exit codes and composition.
#include "checkers/verdict.h"

namespace faultline::checkers {

std::string_view ToString(Validity v) {
  switch (v) {
    case Validity::kValid:
      return "valid";
    case Validity::kInvalid:
      return "invalid";
    case Validity::kUnknown:
      return "unknown";
  }
  return "unknown";
}

int ExitCode(Validity v) {
  switch (v) {
    case Validity::kValid:
      return 0;
    case Validity::kInvalid:
      return 1;
    case Validity::kUnknown:
      return 2;
  }
  return 2;
}

Validity Compose(const std::vector<Verdict>& verdicts) {
  Validity result = Validity::kValid;
  for (const Verdict& v : verdicts) {
    if (v.validity == Validity::kInvalid) return Validity::kInvalid;
    if (v.validity == Validity::kUnknown) result = Validity::kUnknown;
  }
  return result;
}

}  // namespace faultline::checkers
