# Exercises the xonnx CLI end to end (run by ctest as `cli`).
include(${CMAKE_CURRENT_LIST_DIR}/script_util.cmake)

file(REMOVE_RECURSE ${OUT})
# run: given .pb input, outputs written as .npy named after the output.
run_ok(${XONNX} run ${MODELS}/mlp/model.onnx --input x=${MODELS}/mlp/test_data_set_0/input_0.pb --output-dir ${OUT})
file(GLOB npys ${OUT}/*.npy)
list(LENGTH npys n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one .npy in ${OUT}, found: ${npys}")
endif()
# Without --input, fixed-shape inputs get random data.
run_ok(${XONNX} run ${MODELS}/squeezenet1_1/model.onnx)
string(FIND "${LAST_OUT}" "(random)" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "run without --input should use random data:\n${LAST_OUT}")
endif()
# Symbolic dims without an input file: a clear error.
run_fails("symbolic dimension" ${XONNX} run ${MODELS}/mlp/model.onnx)
run_fails("no input named" ${XONNX} run ${MODELS}/mlp/model.onnx --input nope=${MODELS}/mlp/test_data_set_0/input_0.pb)
run_fails("cannot open" ${XONNX} run ${MODELS}/mlp/model.onnx --input x=/nonexistent.npy)
run_fails("" ${XONNX} run /nonexistent.onnx)
# info prints inputs with symbolic dims and the op histogram.
run_ok(${XONNX} info ${MODELS}/mlp/model.onnx)
foreach(needle "inputs:" "Gemm" "opsets:")
  string(FIND "${LAST_OUT}" "${needle}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "info output lacks '${needle}':\n${LAST_OUT}")
  endif()
endforeach()
run_ok(${XONNX} info --ops)
expect_contains("${LAST_OUT}" "Conv  versions" "info --ops")
# info --ops MODEL...: the op selection file, every op with the families registering it.
run_ok(${XONNX} info --ops ${MODELS}/mlp/model.onnx ${MODELS}/squeezenet1_1/model.onnx)
expect_contains("${LAST_OUT}" "# xonnx op selection" "info --ops MODEL...")
string(REGEX MATCH "\nGemm +[a-z_]+" gemm_line "${LAST_OUT}")
string(REGEX MATCH "\nConv +[a-z_]+" conv_line "${LAST_OUT}")
if(NOT gemm_line OR NOT conv_line)
  message(FATAL_ERROR "info --ops MODEL... lacks Gemm or Conv with their families:\n${LAST_OUT}")
endif()
# ... and the plain NHWC forms a target without the own kernels' merges runs (ARM: the layout
# boundary ToNHWC before the first Conv, which x86-64's AVX-512 Conv reads as NCHW directly).
run_ok(${XONNX} info --ops ${MODELS}/mobilenet_v2/model.onnx)
expect_contains("${LAST_OUT}" "com.xonnx.nhwc:ToNHWC " "info --ops mobilenet_v2")
run_exits(2 "takes no MODEL" ${XONNX} info --ops --markdown ${MODELS}/mlp/model.onnx)
run_exits(2 "--ops" ${XONNX} info --markdown)
run_exits(2 "one MODEL" ${XONNX} info ${MODELS}/mlp/model.onnx ${MODELS}/mlp/model.onnx)

# bench: summary lines, then one JSON object on the last line.
run_ok(${XONNX} bench ${MODELS}/mlp/model.onnx --shape x=2,16 --iters 3 --json)
string(STRIP "${LAST_OUT}" stripped)
string(FIND "${stripped}" "\n" nl REVERSE)
math(EXPR nl "${nl} + 1")
string(SUBSTRING "${stripped}" ${nl} -1 last_line)
foreach(key init_ms first_ms median_ms mean_ms stddev_ms min_ms max_ms p90_ms p95_ms p99_ms runs_per_s peak_rss_mb)
  string(JSON value ERROR_VARIABLE json_err GET "${last_line}" ${key})
  if(json_err)
    message(FATAL_ERROR "bench --json: no '${key}' in the last line '${last_line}': ${json_err}")
  endif()
endforeach()
run_ok(${XONNX} bench ${MODELS}/loop_model/model.onnx --iters 2 --warmup 1 --profile
       --input x=${MODELS}/loop_model/test_data_set_0/input_0.pb)
foreach(needle "nodes by self time" "Op types" "Backends" "/Loop > /")
  string(FIND "${LAST_OUT}" "${needle}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "bench --profile output lacks '${needle}':\n${LAST_OUT}")
  endif()
endforeach()
# --top: how many nodes the per-node table lists.
run_ok(${XONNX} bench ${MODELS}/mlp/model.onnx --shape x=2,16 --iters 2 --warmup 1 --profile --top 1)
expect_contains("${LAST_OUT}" "Top 1 of " "bench --profile --top 1")
run_ok(${XONNX} bench ${MODELS}/mlp/model.onnx --shape x=2,16 --iters 2 --warmup 1 --profile --top 0)
string(REGEX MATCH "Top ([0-9]+) of ([0-9]+) nodes" top_line "${LAST_OUT}")
if(NOT top_line OR NOT CMAKE_MATCH_1 EQUAL CMAKE_MATCH_2)
  message(FATAL_ERROR "bench --profile --top 0 should list every node:\n${LAST_OUT}")
endif()
run_fails("" ${XONNX} bench ${MODELS}/mlp/model.onnx --shape x=2,16 --profile --top -1)
# Bad --shape / --input: clear errors naming the problem.
run_fails("symbolic dimension 'batch'" ${XONNX} bench ${MODELS}/mlp/model.onnx)
run_fails("no input named 'y'" ${XONNX} bench ${MODELS}/mlp/model.onnx --shape y=2,16)
run_fails("must be NAME=d0,d1" ${XONNX} bench ${MODELS}/mlp/model.onnx --shape 2,16)
run_fails("not a non-negative integer" ${XONNX} bench ${MODELS}/mlp/model.onnx --shape x=2,a)
run_fails("has rank 1" ${XONNX} bench ${MODELS}/mlp/model.onnx --shape x=2)
run_fails("fixed to 16" ${XONNX} bench ${MODELS}/mlp/model.onnx --shape x=2,15)
run_fails("both --input and --shape" ${XONNX} bench ${MODELS}/mlp/model.onnx --shape x=2,16
          --input x=${MODELS}/mlp/test_data_set_0/input_0.pb)
run_fails("cannot open" ${XONNX} bench ${MODELS}/mlp/model.onnx --input x=/nonexistent.npy)
run_fails("" ${XONNX} bench ${MODELS}/mlp/model.onnx --shape x=2,16 --iters 0)
# run takes --shape too.
run_ok(${XONNX} run ${MODELS}/mlp/model.onnx --shape x=3,16)
string(FIND "${LAST_OUT}" "(random)" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "run --shape should use random data:\n${LAST_OUT}")
endif()

# bench --duration: timed runs until the budget is used up; sub-millisecond times in us.
run_ok(${XONNX} bench ${MODELS}/mlp/model.onnx --shape x=1,16 --warmup 1 --duration 0.2 --json)
expect_contains("${LAST_OUT}" " us" "bench of a sub-millisecond model")
expect_contains("${LAST_OUT}" "runs/s" "bench summary")
string(REGEX MATCH "timed +([0-9]+) runs" _ "${LAST_OUT}")
if(CMAKE_MATCH_1 LESS 2)
  message(FATAL_ERROR "bench --duration 0.2 on the mlp made ${CMAKE_MATCH_1} runs:\n${LAST_OUT}")
endif()
run_ok(${XONNX} bench ${MODELS}/mlp/model.onnx --shape x=1,16 --warmup 1 --duration 60 --iters 3)
expect_contains("${LAST_OUT}" "timed      3 runs" "bench --iters caps --duration")

# Exit codes (docs/cli.md): 2 for bad arguments, whoever finds them (CLI11 or the command).
run_exits(2 "--nope" ${XONNX} run ${MODELS}/mlp/model.onnx --nope)
run_exits(2 "model" ${XONNX} bench)
run_exits(2 "subcommand" ${XONNX})
run_exits(2 "" ${XONNX} bench ${MODELS}/mlp/model.onnx --shape x=2,16 --iters 0)
run_exits(2 "already given" ${XONNX} run ${MODELS}/mlp/model.onnx
          --input x=${MODELS}/mlp/test_data_set_0/input_0.pb --input x=${MODELS}/mlp/test_data_set_0/input_0.pb)
run_exits(2 "has a --shape already" ${XONNX} bench ${MODELS}/mlp/model.onnx --shape x=2,16 --shape x=3,16)
run_exits(2 "not a valid regex" ${XONNX} conformance ${MODELS} --filter "(")
run_ok(${XONNX} --version)
expect_contains("${LAST_OUT}" "xonnx " "--version")

# conformance: -j runs cases side by side with a progress counter on stderr; finding no case
# is an error, not a pass.
execute_process(COMMAND ${XONNX} conformance ${MODELS} -j 2 --filter "mlp|if_model|loop_model"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "conformance -j 2 failed (${rc}):\n${out}\n${err}")
endif()
expect_contains("${out}" "3 passed, 0 failed, 0 skipped" "conformance -j 2")
expect_contains("${err}" "[3/3] 3 passed" "conformance -j 2 progress")
run_exits(1 "no cases found" ${XONNX} conformance ${MODELS} --filter "^no_such_case$")
