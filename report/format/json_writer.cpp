#include <ostream>

#include "report/format/writers.hpp"

namespace cb {

namespace {

// The whole run as one document, written at the end.
class JsonWriter : public Writer {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}
  void begin(const RunMeta& meta) override {
    doc_["schema"] = kResultSchema;
    doc_["meta"] = nlohmann::json(meta);
    doc_["results"] = nlohmann::ordered_json::array();
  }
  void add(const ResultRecord& r) override { doc_["results"].push_back(ordered_json(r)); }
  void update_meta(const RunMeta& meta) override { doc_["meta"] = nlohmann::json(meta); }
  void finish() override { out_ << doc_.dump(1) << "\n" << std::flush; }

 private:
  std::ostream& out_;
  nlohmann::ordered_json doc_;
};

// One record per line, flushed as each case finishes so a crash keeps what was done.
class JsonlWriter : public Writer {
 public:
  explicit JsonlWriter(std::ostream& out) : out_(out) {}
  void begin(const RunMeta&) override {}
  void add(const ResultRecord& r) override { out_ << ordered_json(r).dump() << "\n" << std::flush; }
  void finish() override { out_.flush(); }
  // A last line that is not a record: readers take the file as incomplete (result_reader.hpp).
  void abandon(int exit_code, const std::string& reason) override {
    nlohmann::ordered_json mark;
    mark[kIncompleteKey] = true;
    mark["exit_code"] = exit_code;
    mark["reason"] = reason;
    out_ << mark.dump() << "\n" << std::flush;
  }

 private:
  std::ostream& out_;
};

}  // namespace

std::unique_ptr<Writer> make_json_writer(std::ostream& out) {
  return std::make_unique<JsonWriter>(out);
}
std::unique_ptr<Writer> make_jsonl_writer(std::ostream& out) {
  return std::make_unique<JsonlWriter>(out);
}

}  // namespace cb
