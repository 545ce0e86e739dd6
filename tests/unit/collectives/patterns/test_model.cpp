// Model input: the CSV, the presets' public shapes, the backward time.
#include <gtest/gtest.h>

#include "collectives/patterns/backward_time.hpp"
#include "collectives/patterns/model.hpp"
#include "collectives/patterns/presets.hpp"
#include "common/error.hpp"

namespace cb {
namespace {

TEST(ModelCsv, ReadsColumnsByNameWithPyTorchDtypes) {
  const Model m = parse_model_csv(
      "unit,name,numel,dtype,backward_us\n"
      "h.0,h.0.w,1024,torch.float32,12.5\n"
      ",head.b,8,torch.bfloat16,0\n",
      "m.csv");
  ASSERT_EQ(m.params.size(), 2u);
  EXPECT_EQ(m.params[0].name, "h.0.w");
  EXPECT_EQ(m.params[0].dtype, DType::Float);
  EXPECT_EQ(m.params[0].numel, 1024u);
  EXPECT_EQ(m.params[0].unit, "h.0");
  EXPECT_DOUBLE_EQ(*m.params[0].backward_us, 12.5);
  EXPECT_EQ(m.params[1].dtype, DType::BFloat16);
  EXPECT_EQ(m.params[1].unit, "");
  EXPECT_EQ(m.bytes(), 1024u * 4 + 16);
}

TEST(ModelCsv, BadInputIsAUsageErrorNamingTheLine) {
  auto error = [](const char* text) {
    try {
      parse_model_csv(text, "m.csv");
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("name,dtype\nw,float\n").find("no 'numel' column"), std::string::npos);
  EXPECT_NE(error("name,dtype,numel,size\n").find("unknown column 'size'"), std::string::npos);
  EXPECT_NE(error("name,dtype,numel\nw,float,0\n").find("line 2: invalid numel '0'"),
            std::string::npos);
  EXPECT_NE(error("name,dtype,numel\nw,complex64,4\n").find("unknown dtype"), std::string::npos);
  EXPECT_NE(error("name,dtype,numel\nw,float\n").find("line 2: 2 fields"), std::string::npos);
  EXPECT_NE(error("name,dtype,numel,backward_us\nw,float,4,1\nb,float,4,\n").find("not all"),
            std::string::npos);
  EXPECT_NE(error("name,dtype,numel\n").find("no parameters"), std::string::npos);
}

struct PresetFacts {
  const char* name;
  std::size_t tensors;
  std::uint64_t params;
};

TEST(Presets, ShapesGiveThePublishedParameterCounts) {
  // torchvision's resnet50 docs; transformers' BertModel, GPT2LMHeadModel, LlamaForCausalLM.
  for (const PresetFacts& f :
       {PresetFacts{"resnet50", 161, 25557032}, PresetFacts{"bert-large", 391, 335141888},
        PresetFacts{"gpt2", 148, 124439808}, PresetFacts{"llama2-7b", 291, 6738415616}}) {
    auto m = preset_model(f.name);
    ASSERT_TRUE(m) << f.name;
    EXPECT_EQ(m->params.size(), f.tensors) << f.name;
    EXPECT_EQ(m->numel(), f.params) << f.name;
    EXPECT_FALSE(m->source.empty());
  }
  EXPECT_FALSE(preset_model("gpt5"));
}

TEST(Presets, RepeatedBlocksAreFsdpUnits) {
  auto m = preset_model("gpt2");
  EXPECT_EQ(m->params.front().name, "transformer.wte.weight");
  EXPECT_EQ(m->params.front().unit, "");
  EXPECT_EQ(m->params[2].name, "transformer.h.0.ln_1.weight");
  EXPECT_EQ(m->params[2].unit, "transformer.h.0");
}

TEST(BackwardTime, RateTotalOrTheInputsOwnTimes) {
  Model m;
  m.params = {{"a", DType::Float, 3000000, 10.0, ""}, {"b", DType::Float, 1000000, 30.0, ""}};
  auto rate = backward_times(m, compute_model("2", "", m));
  EXPECT_DOUBLE_EQ(rate[0], 6);
  EXPECT_DOUBLE_EQ(rate[1], 2);
  auto input = backward_times(m, compute_model("", "", m));
  EXPECT_DOUBLE_EQ(input[0], 10);
  // A total spread in proportion to the input's times (10 : 30).
  auto total = backward_times(m, compute_model("", "4", m));
  EXPECT_DOUBLE_EQ(total[0], 1000);
  EXPECT_DOUBLE_EQ(total[1], 3000);
  m.params[0].backward_us.reset();
  m.params[1].backward_us.reset();
  auto by_size = backward_times(m, compute_model("", "4", m));
  EXPECT_DOUBLE_EQ(by_size[0], 3000);
  EXPECT_EQ(compute_model("", "", m).kind, ComputeModel::Kind::None);
  EXPECT_THROW(compute_model("1", "1", m), Error);
}

}  // namespace
}  // namespace cb
