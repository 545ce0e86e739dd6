#include <ostream>

#include "common/csv.hpp"
#include "report/format/writers.hpp"

namespace cb {

namespace {

class CsvWriter : public Writer {
 public:
  explicit CsvWriter(std::ostream& out) : out_(out) {}
  void begin(const RunMeta&) override {
    std::vector<std::string> header(std::begin(kResultColumns), std::end(kResultColumns));
    out_ << csv_line(header) << "\r\n";
  }
  void add(const ResultRecord& r) override { out_ << csv_line(record_fields(r)) << "\r\n"; }
  void finish() override { out_.flush(); }

 private:
  std::ostream& out_;
};

}  // namespace

std::unique_ptr<Writer> make_csv_writer(std::ostream& out) {
  return std::make_unique<CsvWriter>(out);
}

}  // namespace cb
