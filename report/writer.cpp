// Choosing a writer by --format name or by --output extension.
#include "report/writer.hpp"

#include <fmt/ranges.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/checked_write.hpp"
#include "common/error.hpp"
#include "report/report_format.hpp"
#include "report/roof.hpp"

namespace cb {

namespace {

using StreamFactory = std::function<std::unique_ptr<Writer>(std::ostream&)>;

// Hands a writer's text to a file descriptor as each call completes, checked. The inner writer
// writes into a buffer, so a record reaches the file whole or, when the write fails part way,
// is cut back off a regular file: what is there stays valid.
class CheckedWriter : public Writer {
 public:
  CheckedWriter(int fd, std::string name, bool owned, const StreamFactory& make)
      : fd_(fd), name_(std::move(name)), owned_(owned), inner_(make(buffer_)) {
    struct stat st {};
    truncatable_ = owned_ && ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
  }
  ~CheckedWriter() override {
    if (owned_) ::close(fd_);
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
    drain();
    if (owned_ && ::close(fd_) != 0) {
      owned_ = false;
      runtime_error("cannot write {}: {}", name_, std::strerror(errno));
    }
    owned_ = false;
  }

 private:
  void drain() {
    std::string text = buffer_.str();
    buffer_.str("");
    if (text.empty()) return;
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

  int fd_;
  std::string name_;
  bool owned_;
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

 private:
  nlohmann::json topology_;
  std::unique_ptr<Writer> inner_;
};

}  // namespace

std::vector<std::string> stdout_formats() {
  std::vector<std::string> out;
  for (const auto& f : kOutputFormats) {
    if (writes(f, Writes::Results) && !f.streamed) out.emplace_back(f.name);
  }
  return out;
}

namespace {

// The --format for a run's records; a usage Error naming the stdout formats otherwise.
const OutputFormat& results_format(std::string_view format) {
  if (const OutputFormat* f = find_format_named(format, Writes::Results)) return *f;
  usage_error("unknown format '{}': expected one of {}", format, fmt::join(stdout_formats(), ", "));
}

}  // namespace

std::unique_ptr<Writer> make_stream_writer(std::string_view format, std::ostream& out) {
  return results_format(format).results(out);
}

std::unique_ptr<Writer> make_stdout_writer(std::string_view format) {
  return std::make_unique<RoofWriter>(std::make_unique<CheckedWriter>(
      STDOUT_FILENO, "standard output", false, results_format(format).results));
}

void check_output_path(const std::string& path) {
  check_output_directory(path, format_for_path(path, Writes::Results).streamed);
}

bool is_streamed_output(const std::string& path) {
  const OutputFormat* f = find_format_for_path(path, Writes::Results);
  return f && f->streamed;
}

std::unique_ptr<Writer> make_file_writer(const std::string& path) {
  check_output_path(path);
  const OutputFormat* f = &format_for_path(path, Writes::Results);
  if (!f->streamed) {
    return std::make_unique<RoofWriter>(std::make_unique<AtomicFileWriter>(path, f->results));
  }
  // JSONL streams to its final name from the start, so a crash keeps the records written.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) usage_error("cannot write '{}': {}", path, std::strerror(errno));
  return std::make_unique<RoofWriter>(
      std::make_unique<CheckedWriter>(fd, quoted_name(path), true, f->results));
}

}  // namespace cb
