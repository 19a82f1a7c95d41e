# xonnx generate end to end on the shipped tiny model (ctest `cli-generate`): greedy text as
# PyTorch's (ground_truth.json), the summary line, --stop, --chat, seeded sampling, and errors.
include(${CMAKE_CURRENT_LIST_DIR}/../script_util.cmake)
set(TINY ${LLM}/tiny)
file(READ ${TINY}/ground_truth.json truth)

function(generate out_var err_var)
  execute_process(COMMAND ${XONNX} generate ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "xonnx generate ${ARGN} failed (${rc}):\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
  set(${err_var} "${err}" PARENT_SCOPE)
endfunction()

# Greedy: the 64 tokens PyTorch chose, as text (special tokens shown, end tokens not stopping).
string(JSON expected GET "${truth}" greedy 1 text)
string(JSON prompt GET "${truth}" greedy 1 prompt)
generate(out err ${TINY}/genai_fp32 --prompt "${prompt}" -n 64 --temperature 0 --ignore-eos --special)
if(NOT out STREQUAL "${expected}\n")
  message(FATAL_ERROR "greedy output differs from PyTorch's:\n[${out}]\nexpected\n[${expected}]")
endif()
foreach(needle "prompt 2 tok" "generated 64 tok" "tok/s" "time to first token")
  expect_contains("${err}" "${needle}" "the summary line")
endforeach()

# --ids: the same 64 tokens as ids.
string(JSON n_ids LENGTH "${truth}" greedy 1 ids)
set(expected_ids "")
math(EXPR last "${n_ids} - 1")
foreach(i RANGE ${last})
  string(JSON id GET "${truth}" greedy 1 ids ${i})
  list(APPEND expected_ids ${id})
endforeach()
list(JOIN expected_ids " " expected_ids)
generate(ids err ${TINY}/genai_fp32 --prompt "${prompt}" -n 64 --temperature 0 --ignore-eos --ids -q)
if(NOT ids STREQUAL "${expected_ids}\n")
  message(FATAL_ERROR "--ids: [${ids}], expected PyTorch's [${expected_ids}]")
endif()

# --stop: the output ends before the stop string's first occurrence. The stop string is the
# word that starts at the first space past the output's 20th character (whatever the model says).
string(SUBSTRING "${expected}" 20 -1 tail)
string(REGEX MATCH " [A-Za-z]+" stop "${tail}")
if(stop STREQUAL "")
  message(FATAL_ERROR "no word past the 20th character of the greedy text [${expected}]")
endif()
generate(stopped err ${TINY}/genai_fp32 --prompt "${prompt}" -n 64 --temperature 0 --ignore-eos --special
         --stop "${stop}" -q)
string(FIND "${expected}" "${stop}" at)
string(SUBSTRING "${expected}" 0 ${at} before)
if(NOT stopped STREQUAL "${before}\n")
  message(FATAL_ERROR "--stop '${stop}': [${stopped}], expected [${before}]")
endif()
if(NOT err STREQUAL "")
  message(FATAL_ERROR "-q should print no summary: ${err}")
endif()

# Seeded sampling reproduces; chat applies the template and stops at <|im_end|>.
generate(a err ${TINY}/genai_int4 --prompt "<|endoftext|>" -n 20 --temperature 0.9 --top-k 40 --top-p 0.95
         --repetition-penalty 1.1 --seed 7 -q)
generate(b err ${TINY}/genai_int4 --prompt "<|endoftext|>" -n 20 --temperature 0.9 --top-k 40 --top-p 0.95
         --repetition-penalty 1.1 --seed 7 -q)
if(NOT a STREQUAL b)
  message(FATAL_ERROR "the same seed gave different text:\n${a}\n${b}")
endif()
generate(chat err ${TINY}/genai_int4 --chat --prompt "Tell me a fortune about love." -n 100 --temperature 0)
expect_contains("${err}" "prompt 20 tok" "the chat summary (the template's 20 prompt tokens)")
string(FIND "${chat}" "<|im_end|>" pos)
if(NOT pos EQUAL -1)
  message(FATAL_ERROR "special tokens printed without --special: ${chat}")
endif()
execute_process(COMMAND ${XONNX} generate ${TINY}/genai_int4 --chat -n 8 --temperature 0 -q
                INPUT_FILE ${CMAKE_CURRENT_LIST_DIR}/chat_turns.txt RESULT_VARIABLE rc OUTPUT_VARIABLE turns
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "interactive chat failed: ${err}")
endif()
string(REGEX MATCHALL "\n" lines "${turns}")
list(LENGTH lines n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "two turns should give two answers:\n${turns}")
endif()

run_fails("genai_config.json" ${XONNX} generate ${TINY} --prompt x)
run_fails("--prompt" ${XONNX} generate ${TINY}/genai_int4)
run_fails("top-p" ${XONNX} generate ${TINY}/genai_int4 --prompt x --top-p 2)
