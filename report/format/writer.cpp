// Choosing a writer by --format name or by --output extension.
#include "report/format/writer.hpp"

#include <fmt/ranges.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <sstream>
#include <utility>

#include "common/atomic_file.hpp"
#include "common/checked_write.hpp"
#include "common/error.hpp"
#include "report/format/report_format.hpp"
#include "report/roof/roof.hpp"

namespace cb {

namespace {

using StreamFactory = std::function<std::unique_ptr<Writer>(std::ostream&)>;

// Hands a writer's text to a file descriptor as each call completes, checked. The inner writer
// writes into a buffer, so a record reaches the file whole or, when the write fails part way,
// is cut back off a regular file: what is there stays valid. Given a path, the file is created
// with the first text written (or at finish()), so a run that fails before its first record
// leaves no file, as the files written at the end do.
class CheckedWriter : public Writer {
 public:
  CheckedWriter(int fd, std::string name, const StreamFactory& make)
      : fd_(fd), name_(std::move(name)), inner_(make(buffer_)) {}
  CheckedWriter(std::string path, const StreamFactory& make)
      : path_(std::move(path)), name_(quoted_name(path_)), owned_(true), inner_(make(buffer_)) {}
  ~CheckedWriter() override {
    if (owned_ && fd_ >= 0) ::close(fd_);
  }
  void begin(const RunMeta& meta) override {
    inner_->begin(meta);
    drain();
  }
  void add(const ResultRecord& r) override {
    inner_->add(r);
    drain();
  }
  void update_meta(const RunMeta& meta) override { inner_->update_meta(meta); }
  void finish() override {
    inner_->finish();
    open_file();
    drain();
    close_file();
  }
  void abandon(int exit_code, const std::string& reason) override {
    inner_->abandon(exit_code, reason);
    if (fd_ < 0) return;  // nothing was written: no file to mark
    drain();
    close_file();
  }

 private:
  void open_file() {
    if (fd_ >= 0 || path_.empty()) return;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0) runtime_error("cannot write {}: {}", name_, std::strerror(errno));
    struct stat st {};
    truncatable_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
  }
  void close_file() {
    if (!owned_ || fd_ < 0) return;
    const int fd = std::exchange(fd_, -1);
    owned_ = false;
    if (::close(fd) != 0) runtime_error("cannot write {}: {}", name_, std::strerror(errno));
  }
  void drain() {
    std::string text = buffer_.str();
    buffer_.str("");
    if (text.empty()) return;
    open_file();
    if (fd_ == STDOUT_FILENO) flush_stdout();  // anything printed before stays in order
    try {
      write_all(fd_, text, name_);
    } catch (const Error&) {
      if (truncatable_) {
        int ignored = ::ftruncate(fd_, good_);
        (void)ignored;
      }
      throw;
    }
    good_ += static_cast<off_t>(text.size());
  }

  int fd_ = -1;
  std::string path_;  // opened on first use; empty for a descriptor given open
  std::string name_;
  bool owned_ = false;
  bool truncatable_ = false;
  off_t good_ = 0;
  std::ostringstream buffer_;
  std::unique_ptr<Writer> inner_;
};

// Owns the file; commits it on finish.
class AtomicFileWriter : public Writer {
 public:
  AtomicFileWriter(const std::string& path, const StreamFactory& make)
      : file_(path), inner_(make(file_.stream())) {}
  void begin(const RunMeta& meta) override { inner_->begin(meta); }
  void add(const ResultRecord& r) override { inner_->add(r); }
  void update_meta(const RunMeta& meta) override { inner_->update_meta(meta); }
  void finish() override {
    inner_->finish();
    file_.commit();
  }

 private:
  AtomicFile file_;
  std::unique_ptr<Writer> inner_;
};

// Gives every record its roof and efficiency from the hardware facts in the run's meta before
// the format writes it, so that every output carries the same figures.
class RoofWriter : public Writer {
 public:
  explicit RoofWriter(std::unique_ptr<Writer> inner) : inner_(std::move(inner)) {}
  void begin(const RunMeta& meta) override {
    topology_ = meta.topology;
    inner_->begin(meta);
  }
  void add(const ResultRecord& r) override {
    if (!topology_.is_object() || !topology_.contains("roof_facts")) {
      inner_->add(r);  // written without hardware facts: nothing to judge by
      return;
    }
    ResultRecord judged = r;
    apply_roof(judged, topology_);
    for (auto& launch : judged.repeats) apply_roof(launch, topology_);
    inner_->add(judged);
  }
  void update_meta(const RunMeta& meta) override { inner_->update_meta(meta); }
  void finish() override { inner_->finish(); }
  void abandon(int exit_code, const std::string& reason) override {
    inner_->abandon(exit_code, reason);
  }

 private:
  nlohmann::json topology_;
  std::unique_ptr<Writer> inner_;
};

}  // namespace

std::vector<std::string> stdout_formats() {
  std::vector<std::string> out;
  for (const auto& w : kRecordsWriters) {
    if (!kRecordsFormats.format_of(w).streamed) out.emplace_back(w.format);
  }
  return out;
}

namespace {

// The --format for a run's records; a usage Error naming the stdout formats otherwise.
const RecordsWriter& results_format(std::string_view format) {
  if (const RecordsWriter* w = kRecordsFormats.find_named(format)) return *w;
  usage_error("unknown format '{}': expected one of {}", format, fmt::join(stdout_formats(), ", "));
}

}  // namespace

std::unique_ptr<Writer> make_stream_writer(std::string_view format, std::ostream& out) {
  return results_format(format).make(out);
}

std::unique_ptr<Writer> make_stdout_writer(std::string_view format) {
  return std::make_unique<RoofWriter>(std::make_unique<CheckedWriter>(
      STDOUT_FILENO, "standard output", results_format(format).make));
}

void check_output_path(const std::string& path) {
  check_output_directory(path, kRecordsFormats.format_of(kRecordsFormats.for_path(path)).streamed);
}

bool is_streamed_output(const std::string& path) {
  const RecordsWriter* w = kRecordsFormats.find_for_path(path);
  return w && kRecordsFormats.format_of(*w).streamed;
}

std::unique_ptr<Writer> make_file_writer(const std::string& path) {
  check_output_path(path);
  const RecordsWriter& w = kRecordsFormats.for_path(path);
  if (!kRecordsFormats.format_of(w).streamed) {
    return std::make_unique<RoofWriter>(std::make_unique<AtomicFileWriter>(path, w.make));
  }
  // JSONL streams to its final name from its first record, so a crash keeps the records written.
  return std::make_unique<RoofWriter>(std::make_unique<CheckedWriter>(path, w.make));
}

void mark_jsonl_incomplete(const std::string& path, int exit_code, const std::string& reason) {
  std::ostringstream mark;
  make_jsonl_writer(mark)->abandon(exit_code, reason);
  int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (fd < 0) return;
  char last = '\n';
  struct stat st {};
  if (::fstat(fd, &st) != 0) st.st_size = -1;
  if (st.st_size > 0 && ::pread(fd, &last, 1, st.st_size - 1) != 1) last = '\n';
  std::string text(last == '\n' ? 0 : 1, '\n');
  text += mark.str();
  try {
    write_all(fd, text, quoted_name(path));
  } catch (const Error&) {
    // A full file system: the records stay whole, without a mark cut part way.
    if (st.st_size >= 0 && S_ISREG(st.st_mode)) {
      int ignored = ::ftruncate(fd, st.st_size);
      (void)ignored;
    }
  }
  ::close(fd);
}

}  // namespace cb
