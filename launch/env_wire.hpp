// The env:// rendezvous' messages on a TCP connection: a frame is a 4-byte big-endian length,
// a type byte and a payload. Reads wait until a deadline; nothing here throws.
#pragma once

#include <chrono>
#include <optional>
#include <initializer_list>
#include <string>
#include <vector>

namespace cb::env_wire {

using Clock = std::chrono::steady_clock;

enum class Type : char {
  Hello = 'H',      // a rank joins: version, rank, world size, host
  Complaint = 'C',  // a process whose variables are wrong: host, RANK as given, the problem
  Welcome = 'W',    // rank 0: every rank's host, by rank
  Refusal = 'E',    // rank 0: exit code and the line every rank prints
  Data = 'D',       // an allgather's contribution, or its result
  Bye = 'B',        // this rank ends normally
  Lost = 'X',       // rank 0: a peer ended without goodbye (its rank)
};

struct Frame {
  Type type;
  std::string payload;
};

// Frames larger than this are a protocol error (a process that is not commbench).
inline constexpr std::size_t kMaxFrame = 64u << 20;

bool send_frame(int fd, Type type, const std::string& payload);
// The next frame, or nullopt on end of stream, error, timeout or a malformed frame.
std::optional<Frame> read_frame(int fd, Clock::time_point deadline);

// A TCP socket listening on `port` at every IPv4 address, or -1 with errno set.
int listen_on(int port);
// A connected TCP socket to `address` (IPv4 text) and `port`, or -1 with `error` set.
int connect_to(const std::string& address, int port, Clock::time_point deadline,
               std::string& error);
// The IPv4 address `host` resolves to, or empty with `error` set (getaddrinfo's words).
std::string resolve(const std::string& host, std::string& error);
// The local / remote IPv4 address of a connected socket.
std::string local_address(int fd);
std::string peer_address(int fd);
// TCP keepalives and a user timeout, so that a peer whose host is gone shows as an error on
// `fd` after about `seconds` even while nothing is sent.
void detect_silence(int fd, int seconds);

// Lines of text, as hello and welcome payloads carry them.
std::string join_lines(const std::initializer_list<std::string>& lines);
std::string join_lines(const std::vector<std::string>& lines);
std::vector<std::string> split_lines(const std::string& text);

// Several strings in one payload (an allgather's result) and back.
std::string pack(const std::vector<std::string>& parts);
std::optional<std::vector<std::string>> unpack(const std::string& packed);

}  // namespace cb::env_wire
