#include "report/tune_text.hpp"

#include <fmt/format.h>

#include <ostream>

#include "common/text_table.hpp"
#include "common/units.hpp"

namespace cb {

void print_advice(const std::vector<TuneRange>& ranges, const std::string& what,
                  std::ostream& out) {
  TextTable t;
  t.set_header({"backend", "collective", "dtype", "op", "placement", "sizes", "use", "speedup"},
               {TextTable::Align::Left, TextTable::Align::Left, TextTable::Align::Left,
                TextTable::Align::Left, TextTable::Align::Left, TextTable::Align::Right,
                TextTable::Align::Left, TextTable::Align::Right});
  for (const auto& r : ranges) {
    std::string sizes =
        r.min_bytes == r.max_bytes
            ? format_size(r.min_bytes)
            : fmt::format("{} - {}", format_size(r.min_bytes), format_size(r.max_bytes));
    t.add_row({r.backend, r.collective, r.dtype, r.op, r.placement, sizes, r.algorithm,
               fmt::format("{:.2f}x", r.speedup)});
  }
  out << "#\n# tune: " << what << "\n";
  t.print(out, "# ");
  out << std::flush;
}

}  // namespace cb
