// genai_config.json bytes -> the config parser (every field's type and range checked).
#include <string>

#include "sdk/genai/genai_config.h"
#include "tests/fuzz/fuzz_target.h"

XONNX_FUZZ_TARGET(fuzz_genai_config) {
  using namespace xonnx::genai;
  auto config = parse_genai_config(std::string_view(reinterpret_cast<const char*>(data), size));
  if (config.is_ok()) {
    const GenaiConfig& c = config.value();
    for (int32_t layer : {0, 1, c.decoder.num_hidden_layers - 1}) {
      (void)GenaiConfig::layer_name(c.decoder.inputs.past_key_names, layer);
      (void)GenaiConfig::layer_name(c.decoder.outputs.present_value_names, layer);
    }
    (void)c.model_path();
  }
  return 0;
}
