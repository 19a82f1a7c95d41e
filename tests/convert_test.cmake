# Exercises `xonnx convert` and `xonnx verify` end to end (run by ctest as `convert-cli`):
# conversion with a report and verification, external data, and bad input (error, nothing written).
include(${CMAKE_CURRENT_LIST_DIR}/script_util.cmake)

file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
set(MLP ${MODELS}/mlp/model.onnx)

# convert with a report and verification on given inputs.
run_ok(${XONNX} convert ${MLP} ${OUT}/mlp.onnx --report ${OUT}/mlp.md --verify
       --input x=${MODELS}/mlp/test_data_set_0/input_0.pb)
expect_contains("${LAST_OUT}" "converted" "convert output")
expect_contains("${LAST_OUT}" "max abs diff" "convert --verify output")
file(READ ${OUT}/mlp.md report)
foreach(needle "# Conversion report" "## Passes" "## Operators" "| Gemm |" "## Warnings and limits"
               "## Verification" "all outputs match")
  expect_contains("${report}" "${needle}" "the report")
endforeach()
# The converted model runs and matches torch's outputs.
run_ok(${XONNX} run ${OUT}/mlp.onnx --input x=${MODELS}/mlp/test_data_set_0/input_0.pb)

# Level 0, external data, random inputs of the model's shapes, intermediates.
run_ok(${XONNX} convert ${MODELS}/squeezenet1_1/model.onnx ${OUT}/sq.onnx --level 0 --external-data
       --verify-intermediates)
if(NOT EXISTS ${OUT}/sq.onnx.data)
  message(FATAL_ERROR "--external-data did not write ${OUT}/sq.onnx.data")
endif()
expect_contains("${LAST_OUT}" "Intermediates:" "convert --verify-intermediates output")
run_ok(${XONNX} verify ${MODELS}/squeezenet1_1/model.onnx ${OUT}/sq.onnx --intermediates --report ${OUT}/verify.md)
expect_contains("${LAST_OUT}" "within tolerance" "verify output")
file(READ ${OUT}/verify.md vreport)
expect_contains("${vreport}" "[0, 1e-06)" "the verify report")

# Two different models: verify fails and says so.
run_fails("differ" ${XONNX} verify ${MODELS}/resnet18/model.onnx ${MODELS}/resnet18_train_bn/model.onnx
          --shape input=1,3,64,64 --atol 0 --rtol 0)
# Functions survive level 0 and the result still runs.
run_ok(${XONNX} convert ${MODELS}/local_functions/model.onnx ${OUT}/lf.onnx --level 0 --verify)

# Bad input: clear error, nothing written.
run_fails("does not exist" ${XONNX} convert ${OUT}/missing.onnx ${OUT}/x1.onnx)
expect_no_file(${OUT}/x1.onnx)
file(COPY ${MLP} DESTINATION ${OUT}/in)
file(SIZE ${OUT}/in/model.onnx size_before)
run_fails("refusing to overwrite" ${XONNX} convert ${OUT}/in/model.onnx ${OUT}/in/model.onnx)
run_fails("refusing to overwrite" ${XONNX} convert ${OUT}/in/model.onnx ${OUT}/in/../in/model.onnx)
file(SIZE ${OUT}/in/model.onnx size_after)
if(NOT size_before EQUAL size_after)
  message(FATAL_ERROR "the input was modified")
endif()
run_fails("level" ${XONNX} convert ${MLP} ${OUT}/x2.onnx --level 3)
expect_no_file(${OUT}/x2.onnx)
run_fails("does not exist" ${XONNX} convert ${MLP} ${OUT}/no/such/dir/x3.onnx)
run_fails("is a directory" ${XONNX} convert ${MLP} ${OUT})
file(WRITE ${OUT}/junk.onnx "not a model")
run_fails("junk.onnx" ${XONNX} convert ${OUT}/junk.onnx ${OUT}/x4.onnx)
expect_no_file(${OUT}/x4.onnx)
run_fails("no input named" ${XONNX} convert ${MLP} ${OUT}/x5.onnx --verify --input nope=x.npy)
run_fails("symbolic dimension" ${XONNX} verify ${MLP} ${MLP})

# Quantization: int4 weight-only on the decoder (verified: cosine per output), int8 static on the
# trained digits CNN calibrated from its test-data folder, fp16 weights; bad parameters refused.
set(GPT_DATA ${MODELS}/gpt_decoder/test_data_set_0)
run_ok(${XONNX} convert ${MODELS}/gpt_decoder/model.onnx ${OUT}/gpt_int4.onnx --quantize int4
       --verify --input input_ids=${GPT_DATA}/input_0.pb --input past_key_0=${GPT_DATA}/input_1.pb
       --input past_value_0=${GPT_DATA}/input_2.pb --input past_key_1=${GPT_DATA}/input_3.pb
       --input past_value_1=${GPT_DATA}/input_4.pb --report ${OUT}/gpt_int4.md)
file(READ ${OUT}/gpt_int4.md int4_report)
expect_contains("${int4_report}" "MatMulNBits" "int4 report")
file(SIZE ${MODELS}/gpt_decoder/model.onnx fp32_size)
file(SIZE ${OUT}/gpt_int4.onnx int4_size)
math(EXPR int4_percent "100 * ${int4_size} / ${fp32_size}")
if(int4_percent GREATER 60)  # the small fixture has large non-MatMul weights; full size: 28%
  message(FATAL_ERROR "int4 model is ${int4_percent}% of fp32")
endif()
run_ok(${XONNX} convert ${MODELS}/digits_cnn/model.onnx ${OUT}/digits_int8.onnx --quantize int8
       --calibration-data ${MODELS}/digits_cnn --verify --report ${OUT}/digits_int8.md
       --input input=${MODELS}/digits_cnn/test_data_set_0/input_0.pb)
expect_contains("${LAST_OUT}" "cosine" "int8 verification")
run_ok(${XONNX} run ${OUT}/digits_int8.onnx --input input=${MODELS}/digits_cnn/test_data_set_0/input_0.pb)
# A cosine target above what int8 gives keeps a node in float (the report says which); without
# calibration samples the target is refused before anything is written.
run_ok(${XONNX} convert ${MODELS}/digits_cnn/model.onnx ${OUT}/digits_int8_target.onnx --quantize int8
       --calibration-data ${MODELS}/digits_cnn --target-cosine 0.999999 --report ${OUT}/digits_int8_target.md)
file(READ ${OUT}/digits_int8_target.md target_report)
expect_contains("${target_report}" "kept in float for --target-cosine" "int8 --target-cosine report")
run_ok(${XONNX} run ${OUT}/digits_int8_target.onnx --input input=${MODELS}/digits_cnn/test_data_set_0/input_0.pb)
run_fails("--target-cosine applies to int8 static" ${XONNX} convert ${MODELS}/digits_cnn/model.onnx ${OUT}/x8.onnx
          --quantize int8 --target-cosine 0.99)
expect_no_file(${OUT}/x8.onnx)
run_ok(${XONNX} convert ${MLP} ${OUT}/mlp_fp16.onnx --quantize fp16 --verify --shape x=2,16)
run_fails("block size" ${XONNX} convert ${MODELS}/gpt_decoder/model.onnx ${OUT}/x6.onnx
          --quantize int4 --block-size 48)
expect_no_file(${OUT}/x6.onnx)
run_fails("quantize" ${XONNX} convert ${MLP} ${OUT}/x7.onnx --quantize int3)
expect_no_file(${OUT}/x7.onnx)

# --genai: the tiny LLM's TorchScript export becomes a GenAI folder (fused attention, int4,
# genai_config.json, tokenizer); the report lists the fusions; a model with no attention to fuse,
# an OUT model path beside --genai and an output folder whose parent is missing are refused, nothing written.
get_filename_component(LLM ${MODELS}/../models_llm ABSOLUTE)
run_ok(${XONNX} convert ${LLM}/tiny/torch/model.onnx --genai ${OUT}/genai --report ${OUT}/genai.md)
expect_contains("${LAST_OUT}" "4 layers of com.microsoft:GroupQueryAttention (4 heads, 2 KV heads, head size 32)"
                "convert --genai output")
foreach(f model.onnx model.onnx.data genai_config.json tokenizer.json tokenizer_config.json)
  if(NOT EXISTS ${OUT}/genai/${f})
    message(FATAL_ERROR "convert --genai wrote no ${f}")
  endif()
endforeach()
file(READ ${OUT}/genai.md genai_report)
foreach(fusion "fuse-rms-norm" "fuse-skip-rms-norm" "fuse-rotary-embedding" "fuse-group-query-attention"
        "## GenAI decoder" "MatMulNBits")
  expect_contains("${genai_report}" "${fusion}" "convert --genai report")
endforeach()
file(READ ${OUT}/genai/genai_config.json genai_config)
expect_contains("${genai_config}" "\"past_present_share_buffer\": true" "genai_config.json")
# xonnx generate runs the folder; fp32, it writes the shipped genai_fp32 folder's greedy text.
run_ok(${XONNX} generate ${OUT}/genai --prompt "The computer" --max-tokens 12 -q)
run_ok(${XONNX} convert ${LLM}/tiny/torch/model.onnx --genai ${OUT}/genai_fp32 --quantize fp32)
run_ok(${XONNX} generate ${OUT}/genai_fp32 --prompt "The computer" --max-tokens 32 -q)
set(converted_text "${LAST_OUT}")
run_ok(${XONNX} generate ${LLM}/tiny/genai_fp32 --prompt "The computer" --max-tokens 32 -q)
if(converted_text STREQUAL "" OR NOT converted_text STREQUAL LAST_OUT)
  message(FATAL_ERROR "greedy text of the converted fp32 folder:\n${converted_text}\nshipped genai_fp32:\n${LAST_OUT}")
endif()
run_fails("no attention block was fused" ${XONNX} convert ${MLP} --genai ${OUT}/genai_mlp)
expect_no_file(${OUT}/genai_mlp)
run_fails("no OUT model path" ${XONNX} convert ${LLM}/tiny/torch/model.onnx ${OUT}/x8.onnx --genai ${OUT}/genai_x8)
expect_no_file(${OUT}/genai_x8)
run_fails("cannot create the output folder" ${XONNX} convert ${LLM}/tiny/torch/model.onnx --genai ${OUT}/no/such/genai_x9)
expect_no_file(${OUT}/no)
