// Choosing a writer by --format name or by --output extension.
#include "report/writer.hpp"

#include <fmt/ranges.h>

#include <functional>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "report/report_format.hpp"

namespace cb {

namespace {

using StreamFactory = std::function<std::unique_ptr<Writer>(std::ostream&)>;

struct Format {
  const char* name;       // --format value
  const char* extension;  // --output extension
  StreamFactory make;
};

const std::vector<Format>& formats() {
  static const std::vector<Format> kFormats = {
      {"table", ".txt", make_table_writer}, {"csv", ".csv", make_csv_writer},
      {"json", ".json", make_json_writer},  {"jsonl", ".jsonl", make_jsonl_writer},
      {"md", ".md", make_markdown_writer},  {"gbench", ".gbench.json", make_gbench_writer},
  };
  return kFormats;
}

std::string accepted_extensions() {
  std::vector<std::string> extensions;
  for (const auto& f : formats()) extensions.emplace_back(f.extension);
  return fmt::format("{}", fmt::join(extensions, " "));
}

const Format* by_extension(const std::string& path) {
  // Longest match first so ".gbench.json"-style compound extensions can win over ".json".
  const Format* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& f : formats()) {
    std::string ext = f.extension;
    if (path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0 &&
        ext.size() > best_len) {
      best = &f;
      best_len = ext.size();
    }
  }
  return best;
}

// Owns the file; commits it on finish (JSONL streams to the final name from the start).
class FileWriter : public Writer {
 public:
  FileWriter(const std::string& path, const StreamFactory& make, bool streaming)
      : streaming_(streaming) {
    if (streaming_) {
      stream_.open(path, std::ios::binary | std::ios::trunc);
      if (!stream_) usage_error("cannot write '{}'", path);
      inner_ = make(stream_);
    } else {
      file_ = std::make_unique<AtomicFile>(path);
      inner_ = make(file_->stream());
    }
  }
  void begin(const RunMeta& meta) override { inner_->begin(meta); }
  void add(const ResultRecord& r) override { inner_->add(r); }
  void finish() override {
    inner_->finish();
    if (file_) file_->commit();
  }

 private:
  bool streaming_;
  std::ofstream stream_;
  std::unique_ptr<AtomicFile> file_;
  std::unique_ptr<Writer> inner_;
};

}  // namespace

std::vector<std::string> stdout_formats() {
  std::vector<std::string> out;
  for (const auto& f : formats()) {
    if (std::string(f.name) != "jsonl") out.push_back(f.name);
  }
  return out;
}

std::unique_ptr<Writer> make_stream_writer(std::string_view format, std::ostream& out) {
  for (const auto& f : formats()) {
    if (format == f.name) return f.make(out);
  }
  usage_error("unknown format '{}': expected one of {}", format, fmt::join(stdout_formats(), ", "));
}

void check_output_path(const std::string& path) {
  if (!by_extension(path)) {
    usage_error("cannot tell the format of output '{}' from its extension: expected one of {}",
                path, accepted_extensions());
  }
  check_output_directory(path);
}

std::unique_ptr<Writer> make_file_writer(const std::string& path) {
  check_output_path(path);
  const Format* f = by_extension(path);
  return std::make_unique<FileWriter>(path, f->make, std::string(f->extension) == ".jsonl");
}

}  // namespace cb
