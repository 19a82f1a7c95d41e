# Exercises `xonnx convert` and `xonnx verify` end to end (run by ctest as `convert-cli`):
# conversion with a report and verification, external data, and bad input (error, nothing written).
function(run_ok)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(LAST_OUT "${out}" PARENT_SCOPE)
endfunction()
function(run_fails needle)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "command should have failed: ${ARGN}")
  endif()
  string(FIND "${err}" "${needle}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "error of ${ARGN} does not mention '${needle}':\n${err}")
  endif()
endfunction()
function(expect_contains text needle what)
  string(FIND "${text}" "${needle}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "${what} lacks '${needle}':\n${text}")
  endif()
endfunction()
function(expect_no_file path)
  if(EXISTS ${path})
    message(FATAL_ERROR "${path} should not have been written")
  endif()
endfunction()

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
