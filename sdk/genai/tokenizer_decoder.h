// tokenizer.json "decoder": turns token strings back into text (HF tokenizers' decoders/*.rs).
// Supported types: Sequence, ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip,
// BPEDecoder.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sdk/genai/tokenizer_json.h"

namespace xonnx::genai {

class Decoder {
 public:
  virtual ~Decoder() = default;
  // HF's decode_chain: rewrites the list of token strings (some decoders join them into one).
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
  // Maps one token, taken alone and not first in the text, to the raw bytes it stands for
  // (ByteLevel chars to bytes, <0xNN> to the byte, the Metaspace char to a space); no
  // UTF-8 repair, so a token that is part of a character gives that part.
  virtual void token_bytes(std::string& token) const = 0;
};

Result<std::unique_ptr<Decoder>> make_decoder(const Json& j, const JsonPath& at);

}  // namespace xonnx::genai
