// What every rank of an env:// launch must agree on before anything runs: its command's plan as
// (option, value) pairs in a fixed order, each value the plan's typed value in one canonical
// spelling (app/run_fingerprint builds it from the plan, never from the command line's text, so
// that `-e 1M` and `-e 1048576` agree). Every rank sends it to rank 0 at the rendezvous; rank 0
// compares it with its own and names the first option that differs. Only options that decide
// what is measured and how are in it, never a rank's own (its outputs, progress, a path or an
// interface of its host) and never an environment variable's value, so no secret travels.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cb {

struct PlanOption {
  std::string name;   // as the user gives it: "--collectives", or "subcommand"
  std::string value;  // canonical: equal values mean the same plan
  bool operator==(const PlanOption&) const = default;
};

struct PlanFingerprint {
  std::vector<PlanOption> options;

  void add(std::string name, std::string value);
  // 16 hex digits (FNV-1a, 64 bits) of encode(): equal plans give equal digests.
  std::string digest() const;
  // One line per option, "name=value", with backslashes and line ends escaped; decode() reads
  // it back (nullopt when it is not such text).
  std::string encode() const;
  static std::optional<PlanFingerprint> decode(const std::string& text);
};

// The first option whose value differs between two fingerprints (by position: both come from
// the same build's table), or that one of them lacks ("(none)"); nullopt when they agree.
struct PlanDifference {
  std::string option;
  std::string theirs;
  std::string ours;
};
std::optional<PlanDifference> first_difference(const PlanFingerprint& theirs,
                                               const PlanFingerprint& ours);

// A value as a line shows it: control characters as '?', at most 80 characters ("..." after).
std::string shown_value(const std::string& value);

}  // namespace cb
