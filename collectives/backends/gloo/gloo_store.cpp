#include "collectives/backends/gloo/gloo_store.hpp"

#include <gloo/common/error.h>

#include "common/error.hpp"

namespace cb::gloo_backend {

std::string encode_entry(const std::string& key, const std::vector<char>& data) {
  std::string s = std::to_string(key.size()) + ":" + key;
  s.append(data.begin(), data.end());
  return s;
}

std::pair<std::string, std::vector<char>> decode_entry(const std::string& entry) {
  auto colon = entry.find(':');
  if (colon == std::string::npos) runtime_error("malformed rendezvous entry");
  std::size_t len = std::stoul(entry.substr(0, colon));
  if (colon + 1 + len > entry.size()) runtime_error("malformed rendezvous entry");
  std::string key = entry.substr(colon + 1, len);
  std::vector<char> data(entry.begin() + static_cast<std::ptrdiff_t>(colon + 1 + len), entry.end());
  return {std::move(key), std::move(data)};
}

void ControlStore::set(const std::string& key, const std::vector<char>& data) {
  for (const auto& entry : control_.allgather(encode_entry(key, data))) {
    auto [k, v] = decode_entry(entry);
    values_[k] = std::move(v);
  }
}

std::vector<char> ControlStore::get(const std::string& key) {
  auto it = values_.find(key);
  // Gloo only asks for keys that the allgather in set() delivered; anything else is a change in
  // Gloo's rendezvous protocol this store does not follow.
  if (it == values_.end()) {
    throw ::gloo::IoException("rendezvous key '" + key + "' was never set by any rank");
  }
  return it->second;
}

void ControlStore::wait(const std::vector<std::string>& keys) {
  for (const auto& k : keys) get(k);
}

}  // namespace cb::gloo_backend
