// Comparing result files: match records by what was measured, and judge over launches (each
// launch one sample): the shape test per record (its log time against its launch's median, so a
// mode that moves a whole launch cancels) and the level test (the launches' geometric means,
// over launches whose control measurement agrees); inconclusive when the machine differed.
#pragma once

#include <vector>

#include "report/compare/compare_report.hpp"
#include "report/format/result_reader.hpp"

namespace cb {

// BASE may be several files (a history of earlier runs): their repetitions are pooled.
CompareReport compare_results(const std::vector<ResultFile>& base, const ResultFile& next,
                              const CompareOptions& options);
CompareReport compare_results(const ResultFile& base, const ResultFile& next,
                              const CompareOptions& options);

}  // namespace cb
