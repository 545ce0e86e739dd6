// What receives a run's results: its meta once, then records as cases finish, then finish()
// once. The formats in report/ implement it; the engine hands its records to it.
#pragma once

#include <string>

#include "common/record.hpp"

namespace cb {

class Writer {
 public:
  virtual ~Writer() = default;
  virtual void begin(const RunMeta& meta) = 0;
  virtual void add(const ResultRecord& record) = 0;
  // The meta again before finish(), with what only the end of the run knows (its launches'
  // control measurements); formats that write the meta at the end take it.
  virtual void update_meta(const RunMeta&) {}
  virtual void finish() = 0;
  // Instead of finish(): the run failed (`exit_code`, `reason`) after the records added so far.
  // A streamed format marks what it wrote as incomplete; the others write nothing.
  virtual void abandon(int /*exit_code*/, const std::string& /*reason*/) {}
};

}  // namespace cb
