// replay's sweep over launches: each setting's figures over the launches (medians, every launch
// kept), and per backend the bucket cap to use, judged as tune --env judges an environment
// (report/env_verdict): the launch is the sample, each launch's figure is the setting's step time
// (the median of its timed steps), the fastest other cap is compared with the reference cap by
// Welch's interval of the time ratio at 99 % over the family of candidates, with the floor
// 1 + min_gain, behind the control gate.
#pragma once

#include <map>
#include <vector>

#include "common/replay_record.hpp"
#include "report/launch_statistics.hpp"

namespace cb {

// One setting over its launches (each with `repeat` set): every figure and each collective's
// times the median over the launches; overlap from the medians; wrong the sum; the launches
// kept in `launches`.
ReplayRecord summarize_launches(const std::vector<ReplayRecord>& launches);

// The reference cap among a backend's caps, in the order they were given: DDP's default, 25
// MiB, when it is one of them, else the first.
double reference_cap(const std::vector<double>& caps_mb);

// Per backend with more than one DDP bucket cap among `summaries` (each a summary over its
// launches, or a single launch): the verdict on its caps. `control`: each launch's control
// measurement by its repeat (missing: not gated).
std::vector<ReplayVerdict> judge_bucket_caps(const std::vector<ReplayRecord>& summaries,
                                             const std::map<int, ControlFigures>& control,
                                             double min_gain);

}  // namespace cb
