#include "collectives/patterns/presets.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <functional>

namespace cb {

namespace {

// Appends parameters named `prefix` + each suffix, all in `unit`.
class Builder {
 public:
  explicit Builder(Model& m) : m_(m) {}
  void add(const std::string& name, std::uint64_t numel, const std::string& unit = "") {
    m_.params.push_back({name, DType::Float, numel, std::nullopt, unit});
  }
  // nn.Linear(in, out): weight (out x in), then bias (out).
  void linear(const std::string& name, std::uint64_t in, std::uint64_t out, bool bias,
              const std::string& unit) {
    add(name + ".weight", in * out, unit);
    if (bias) add(name + ".bias", out, unit);
  }
  // nn.LayerNorm / nn.BatchNorm2d: weight, then bias.
  void norm(const std::string& name, std::uint64_t n, const std::string& unit) {
    add(name + ".weight", n, unit);
    add(name + ".bias", n, unit);
  }

 private:
  Model& m_;
};

// torchvision.models.resnet50: Bottleneck blocks [3, 4, 6, 3], expansion 4, 1000 classes.
void resnet50(Model& m) {
  Builder b(m);
  b.add("conv1.weight", 64ULL * 3 * 7 * 7);
  b.norm("bn1", 64, "");
  const int blocks[] = {3, 4, 6, 3};
  std::uint64_t in = 64;
  for (int layer = 0; layer < 4; ++layer) {
    const std::uint64_t width = 64ULL << layer, out = width * 4;
    for (int k = 0; k < blocks[layer]; ++k) {
      const std::string unit = fmt::format("layer{}.{}", layer + 1, k);
      b.add(unit + ".conv1.weight", width * in, unit);
      b.norm(unit + ".bn1", width, unit);
      b.add(unit + ".conv2.weight", width * width * 9, unit);
      b.norm(unit + ".bn2", width, unit);
      b.add(unit + ".conv3.weight", out * width, unit);
      b.norm(unit + ".bn3", out, unit);
      if (k == 0) {  // the first block of each layer projects its input
        b.add(unit + ".downsample.0.weight", out * in, unit);
        b.norm(unit + ".downsample.1", out, unit);
      }
      in = out;
    }
  }
  b.linear("fc", 2048, 1000, true, "");
}

// transformers BertModel with bert-large-uncased's configuration.
void bert_large(Model& m) {
  Builder b(m);
  const std::uint64_t h = 1024, ff = 4096;
  b.add("embeddings.word_embeddings.weight", 30522 * h);
  b.add("embeddings.position_embeddings.weight", 512 * h);
  b.add("embeddings.token_type_embeddings.weight", 2 * h);
  b.norm("embeddings.LayerNorm", h, "");
  for (int l = 0; l < 24; ++l) {
    const std::string u = fmt::format("encoder.layer.{}", l);
    b.linear(u + ".attention.self.query", h, h, true, u);
    b.linear(u + ".attention.self.key", h, h, true, u);
    b.linear(u + ".attention.self.value", h, h, true, u);
    b.linear(u + ".attention.output.dense", h, h, true, u);
    b.norm(u + ".attention.output.LayerNorm", h, u);
    b.linear(u + ".intermediate.dense", h, ff, true, u);
    b.linear(u + ".output.dense", ff, h, true, u);
    b.norm(u + ".output.LayerNorm", h, u);
  }
  b.linear("pooler.dense", h, h, true, "");
}

// transformers GPT2LMHeadModel with gpt2's configuration; lm_head shares wte's weight, so
// model.parameters() does not list it again.
void gpt2(Model& m) {
  Builder b(m);
  const std::uint64_t h = 768;
  b.add("transformer.wte.weight", 50257 * h);
  b.add("transformer.wpe.weight", 1024 * h);
  for (int l = 0; l < 12; ++l) {
    const std::string u = fmt::format("transformer.h.{}", l);
    b.norm(u + ".ln_1", h, u);
    b.linear(u + ".attn.c_attn", h, 3 * h, true, u);  // Conv1D: weight (in x out), then bias
    b.linear(u + ".attn.c_proj", h, h, true, u);
    b.norm(u + ".ln_2", h, u);
    b.linear(u + ".mlp.c_fc", h, 4 * h, true, u);
    b.linear(u + ".mlp.c_proj", 4 * h, h, true, u);
  }
  b.norm("transformer.ln_f", h, "");
}

// transformers LlamaForCausalLM with Llama-2-7b-hf's configuration (lm_head not tied).
void llama2_7b(Model& m) {
  Builder b(m);
  const std::uint64_t h = 4096, ff = 11008, vocab = 32000;
  b.add("model.embed_tokens.weight", vocab * h);
  for (int l = 0; l < 32; ++l) {
    const std::string u = fmt::format("model.layers.{}", l);
    for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
      b.linear(fmt::format("{}.self_attn.{}", u, p), h, h, false, u);
    }
    b.linear(u + ".mlp.gate_proj", h, ff, false, u);
    b.linear(u + ".mlp.up_proj", h, ff, false, u);
    b.linear(u + ".mlp.down_proj", ff, h, false, u);
    b.add(u + ".input_layernorm.weight", h, u);
    b.add(u + ".post_attention_layernorm.weight", h, u);
  }
  b.add("model.norm.weight", h);
  b.add("lm_head.weight", vocab * h);
}

struct Preset {
  PresetInfo info;
  void (*build)(Model&);
};

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = {
      {{"resnet50", "ResNet-50, 25,557,032 parameters in 161 tensors",
        "torchvision.models.resnet50 (torchvision/models/resnet.py: Bottleneck, layers "
        "[3, 4, 6, 3]); He et al., Deep Residual Learning, 2015"},
       resnet50},
      {{"bert-large", "BERT-large (BertModel), 335,141,888 parameters in 391 tensors",
        "transformers BertModel with bert-large-uncased's config.json (hidden 1024, 24 layers, "
        "intermediate 4096, vocab 30522, 512 positions, 2 token types); Devlin et al., 2018"},
       bert_large},
      {{"gpt2",
        "GPT-2 124M (GPT2LMHeadModel, lm_head tied), 124,439,808 parameters in 148 "
        "tensors",
        "transformers GPT2LMHeadModel with gpt2's config.json (n_embd 768, n_layer 12, "
        "n_positions 1024, vocab 50257, tied lm_head); Radford et al., 2019"},
       gpt2},
      {{"llama2-7b", "a 7B decoder (Llama-2-7B), 6,738,415,616 parameters in 291 tensors",
        "transformers LlamaForCausalLM with Llama-2-7b-hf's config.json (hidden 4096, 32 "
        "layers, intermediate 11008, vocab 32000, untied lm_head); Touvron et al., 2023"},
       llama2_7b},
  };
  return all;
}

}  // namespace

const std::vector<PresetInfo>& model_presets() {
  static const std::vector<PresetInfo> infos = [] {
    std::vector<PresetInfo> out;
    for (const auto& p : presets()) out.push_back(p.info);
    return out;
  }();
  return infos;
}

std::optional<Model> preset_model(std::string_view name) {
  for (const auto& p : presets()) {
    if (p.info.name != name) continue;
    Model m;
    m.name = std::string(name);
    m.source = std::string(p.info.source);
    p.build(m);
    return m;
  }
  return std::nullopt;
}

}  // namespace cb
