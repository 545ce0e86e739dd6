// The plan every rank of an env:// launch must run (launch/plan_fingerprint.hpp), built from the
// typed plans: the build, the subcommand, the subcommand's own options, then run's options in
// run_flags() order, each value in one canonical spelling. A rank's own options (its outputs,
// its progress, a path or an interface of its host) and those refused under a launcher are no
// part of it: run_options_not_agreed() says which and why, and a unit test holds every row of
// run_flags() to being in one of the two.
#pragma once

#include <map>
#include <string>

#include "app/run_request.hpp"
#include "launch/plan_fingerprint.hpp"

namespace cb {

// The build's version and `subcommand` ("run", "topo", "probe links"): how every plan starts.
PlanFingerprint command_fingerprint(const std::string& subcommand);

// `head` (command_fingerprint and the subcommand's own options), then each run option of `plan`
// that decides what is measured and how. Give it the plan as the rank runs it (the backends
// chosen, -e's default for them): two ranks that would measure alike agree.
PlanFingerprint run_fingerprint(const RunPlan& plan,
                                PlanFingerprint head = command_fingerprint("run"));

// The rows of run_flags() that are no part of the fingerprint, by long name, with why.
const std::map<std::string, std::string>& run_options_not_agreed();

}  // namespace cb
