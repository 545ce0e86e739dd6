// How alltoallv splits the bytes between pairs of ranks: the distributions `--split` names, as
// parsed values. The matrices they make are in traffic.hpp.
//
//   uniform            every pair the same (alltoall's blocks)
//   distance[:S]       nccl-tests' generated pattern: (1-S) x uniform + S x weighted by the
//                      distance (j - i) mod n; S in [0, 1], default 1
//   zipf:A             receiver popularity by Zipf's law: rank k receives a share prop. to
//                      1 / (k+1)^A of what every rank sends (rank 0 the hottest); A >= 0
//   moe:E,K[,G][,CF]   a mixture-of-experts router: E experts over the ranks, each token's
//                      top-K experts by scores |N(0,1)| + 1 (DeepEP's tests), within its top G
//                      ranks when G > 0, at most CF x its fair share per expert when CF > 0
//   matrix:FILE        bytes per pair from a file: n lines of n whitespace-separated integers
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cb {

enum class SplitKind { Uniform, Distance, Zipf, Moe, Matrix };

struct MoeRouting {
  int experts = 0;      // E, spread evenly over the ranks
  int topk = 0;         // K experts per token
  int groups = 0;       // G: a token's experts lie on at most G ranks (0: no limit)
  double capacity = 0;  // CF: per expert, at most CF x t x K / E of a rank's t tokens (0: none)
  bool operator==(const MoeRouting&) const = default;
};

struct SplitSpec {
  SplitKind kind = SplitKind::Uniform;
  double spread = 1.0;  // distance: S
  double zipf = 0;      // zipf: A
  MoeRouting moe;
  std::string path;  // matrix: the file as given
  // matrix: bytes from rank i to rank j at [i * matrix_ranks + j], once loaded (load_matrix)
  std::vector<std::uint64_t> matrix;
  int matrix_ranks = 0;
  std::uint64_t seed = 1;           // the router's random scores (moe)
  std::uint64_t moe_hidden = 7168;  // elements per token (moe), of the case's dtype
  bool operator==(const SplitSpec&) const = default;
};

// Everything about the splits a run measures.
struct SplitSettings {
  std::vector<SplitSpec> splits = {SplitSpec{}};
  std::uint64_t seed = 1;
  std::uint64_t moe_hidden = 7168;  // DeepEP's tests' hidden size
  bool requested = false;           // --split was given
};

// One --split value; a usage Error naming what is wrong. A matrix's file is not read here.
SplitSpec parse_split(const std::string& text);
// The canonical text of a split: "uniform", "distance:0.5", "zipf:1.2", "moe:64,8,4,1.25",
// "matrix:traffic.txt".
std::string split_name(const SplitSpec& s);

// A matrix file's text as read: n rows of n non-negative integers (bytes), '#' to the end of a
// line is a comment; a usage Error naming `where` and the first bad row otherwise.
void parse_matrix_text(const std::string& text, const std::string& where, SplitSpec& s);
// Reads the file of a matrix split (a no-op for the other kinds); a usage Error when it cannot.
std::string read_matrix_file(const std::string& path);
void load_matrix(SplitSpec& s);

// Why `s` cannot split `nranks` ranks (moe: E not a multiple of nranks, too few experts within G
// ranks; matrix: a file for another rank count), or empty when it can.
std::string split_unfit(const SplitSpec& s, int nranks);

}  // namespace cb
