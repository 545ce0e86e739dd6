#include "collectives/backends/gloo/gloo_control.hpp"

#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>

#include "collectives/backends/gloo/gloo_errors.hpp"
#include "collectives/backends/gloo/gloo_store.hpp"
#include "collectives/backends/gloo/gloo_transport.hpp"

namespace cb::gloo_backend {

namespace {

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

class GlooControl : public Control {
 public:
  GlooControl(::gloo::rendezvous::Store& store, const TransportChoice& transport, int rank,
              int size, double timeout_s)
      : rank_(rank), size_(size) {
    device_ = make_device(transport);
    context_ = connect(store, device_, rank, size, gloo_timeout(timeout_s));
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void barrier() override {
    guarded("barrier (control)", [&] {
      ::gloo::BarrierOptions opts(context_);
      ::gloo::barrier(opts);
    });
  }
  void max(double* v, std::size_t n) override {
    allreduce(v, n, static_cast<ReduceFn>(&::gloo::max<double>), "max (control)");
  }
  void sum(std::uint64_t* v, std::size_t n) override {
    allreduce(v, n, static_cast<ReduceFn>(&::gloo::sum<std::uint64_t>), "sum (control)");
  }
  std::vector<std::string> allgather(const std::string& mine) override {
    std::vector<std::uint64_t> lens(static_cast<std::size_t>(size_), 0);
    lens[static_cast<std::size_t>(rank_)] = mine.size();
    sum(lens.data(), lens.size());  // every other entry is zero
    std::vector<std::size_t> counts(lens.begin(), lens.end());
    std::size_t total = 0;
    for (auto l : counts) total += l;
    std::string all(total, '\0');
    std::string input = mine;
    guarded("allgather (control)", [&] {
      ::gloo::AllgathervOptions opts(context_);
      opts.setInput(input.data(), input.size());
      opts.setOutput(all.data(), counts);
      ::gloo::allgatherv(opts);
    });
    std::vector<std::string> out;
    std::size_t at = 0;
    for (auto l : counts) {
      out.push_back(all.substr(at, l));
      at += l;
    }
    return out;
  }
  void send(int peer, const void* data, std::size_t bytes, int count) override {
    guarded("send (control)", [&] {
      auto buf = context_->createUnboundBuffer(const_cast<void*>(data), bytes);
      for (int i = 0; i < count; ++i) buf->send(peer, kPointSlot);
      for (int i = 0; i < count; ++i) buf->waitSend();
    });
  }
  void recv(int peer, void* data, std::size_t bytes, int count) override {
    guarded("recv (control)", [&] {
      auto buf = context_->createUnboundBuffer(data, bytes);
      for (int i = 0; i < count; ++i) buf->recv(peer, kPointSlot);
      for (int i = 0; i < count; ++i) buf->waitRecv();
    });
  }

 private:
  static constexpr std::uint64_t kPointSlot = 701;
  template <typename T>
  void allreduce(T* v, std::size_t n, ReduceFn fn, const char* what) {
    if (n == 0) return;
    guarded(what, [&] {
      ::gloo::AllreduceOptions opts(context_);
      opts.setOutput(v, n);
      opts.setReduceFunction(fn);
      ::gloo::allreduce(opts);
    });
  }

  int rank_;
  int size_;
  std::shared_ptr<::gloo::transport::Device> device_;
  std::shared_ptr<::gloo::rendezvous::Context> context_;
};

}  // namespace

std::unique_ptr<Control> make_file_store_control(const std::string& store_dir, int rank, int size,
                                                 double timeout_seconds) {
  ::gloo::rendezvous::FileStore files(store_dir);
  ::gloo::rendezvous::PrefixStore store("control", files);
  // Control traffic never leaves this host under the local launcher.
  return std::make_unique<GlooControl>(store, choose_transport(""), rank, size, timeout_seconds);
}

std::unique_ptr<Control> make_rendezvous_control(Control& rendezvous, const std::string& address,
                                                 double timeout_seconds) {
  ControlStore store(rendezvous);
  TransportChoice transport;
  transport.hostname = address;
  transport.reason = "where it reached rank 0";
  return std::make_unique<GlooControl>(store, transport, rendezvous.rank(), rendezvous.size(),
                                       timeout_seconds);
}

}  // namespace cb::gloo_backend
