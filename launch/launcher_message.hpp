// What an MPI launcher or MPI library printed when a job failed, reduced to the one line that
// names the cause, for commbench's first line: Open MPI's help boxes (rules of dashes around a
// paragraph and "Key: value" lines), MPICH's "Abort(N): Fatal error in ..." lines, hydra's
// BAD TERMINATION banner (a consequence, never the cause), and the banner's lines on stdout.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cb {

// The first meaningful message of `lines`: a help box's first sentence with the box's
// "Key: value" lines in parentheses ("A requested component was not found, or was unable to be
// opened (Host: h1, Framework: btl, Component: nonexistent)"), else the first line that is
// neither blank, nor a rule, nor hydra's banner, nor Open MPI's "N more processes have sent help
// message" notes, without MPICH's "Abort(N): " or a "[host:pid] ***" prefix. Open MPI's boxes
// that only say start-up failed ("It looks like MPI_INIT failed ...") come second to one that
// says why. When Open MPI lost the ranks' boxes (its show_help.c error log), it says so. At most
// 300 characters; empty when nothing is meaningful.
std::string first_meaningful_message(const std::vector<std::string>& lines);

// Removes MPICH hydra's BAD TERMINATION banner (and the lines it ends with) from a stream that
// may carry a document (JSON, CSV): whole lines pass once complete, a banner is dropped.
class HydraBannerFilter {
 public:
  // The text that may be written now.
  std::string feed(std::string_view data);
  // Whatever is held back at the end of the stream (an unfinished line, a lone rule).
  std::string finish();

 private:
  std::string take_line(const std::string& line);  // one whole line (with its newline)
  std::string partial_;                            // an unfinished line
  std::string held_;                               // blank lines and rules that may open a banner
  bool held_rule_ = false;                         // the last held line is a rule
  enum class State { Text, Banner, Tail } state_ = State::Text;
};

}  // namespace cb
