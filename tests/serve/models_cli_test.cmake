# xonnx models end to end (ctest `cli-models`): add / list / info / remove over a temporary
# cache ($XONNX_MODELS), and `models run` as a two-turn chat on the shipped tiny int4 model:
# the same answers as `xonnx generate --chat`, the second turn computing only its new tokens
# (the KV cache of the first turn kept), /exit, a conversation outgrowing the cache, and errors.
include(${CMAKE_CURRENT_LIST_DIR}/../script_util.cmake)
set(TINY ${LLM}/tiny/genai_int4)
set(TURNS ${CMAKE_CURRENT_LIST_DIR}/../llm/chat_turns.txt)
file(REMOVE_RECURSE ${WORK})
set(ENV{XONNX_MODELS} ${WORK}/cache)

run_ok(${XONNX} models add ${TINY} --name tiny)
run_ok(${XONNX} models list)
expect_contains("${LAST_OUT}" "tiny" "models list")
run_ok(${XONNX} models info tiny)
expect_contains("${LAST_OUT}" "${WORK}/cache/tiny" "models info")

function(chat out_var err_var input)
  execute_process(COMMAND ${XONNX} ${ARGN} INPUT_FILE ${input} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "xonnx ${ARGN} < ${input} failed (${rc}):\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
  set(${err_var} "${err}" PARENT_SCOPE)
endfunction()
function(expect_answers text count what)  # one line per answer (the tiny model's are one line)
  string(REGEX MATCHALL "\n" lines "${text}")
  list(LENGTH lines n)
  if(NOT n EQUAL count)
    message(FATAL_ERROR "${what} should give ${count} answer(s):\n[${text}]")
  endif()
endfunction()

# Two turns: two answers, word for word those of `generate --chat` on the model's own folder.
chat(answers err ${TURNS} models run tiny -n 8 --temperature 0 --verbose)
expect_answers("${answers}" 2 "two turns")
chat(expected ignored ${TURNS} generate ${TINY} --chat -n 8 --temperature 0 -q)
if(NOT answers STREQUAL expected)
  message(FATAL_ERROR "models run answered\n[${answers}]\ngenerate --chat answered\n[${expected}]")
endif()

# The second turn reuses the first's KV cache: it computes fewer prompt tokens than the
# conversation holds (first prompt + first answer + the new message).
string(REGEX MATCHALL "prompt ([0-9]+) tok[^\n]*generated ([0-9]+) tok" summaries "${err}")
list(LENGTH summaries n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "--verbose should print one summary per turn:\n${err}")
endif()
list(GET summaries 0 first)
list(GET summaries 1 second)
string(REGEX MATCH "prompt ([0-9]+) tok[^\n]*generated ([0-9]+) tok" _ "${first}")
math(EXPR first_total "${CMAKE_MATCH_1} + ${CMAKE_MATCH_2}")
string(REGEX MATCH "prompt ([0-9]+) tok" _ "${second}")
if(NOT CMAKE_MATCH_1 LESS first_total OR CMAKE_MATCH_1 EQUAL 0)
  message(FATAL_ERROR "the second turn computed ${CMAKE_MATCH_1} prompt tokens; the first turn held "
                      "${first_total}, so its KV cache was not reused:\n${err}")
endif()

# /exit ends the conversation before the second message.
file(WRITE ${WORK}/exit.txt "Tell me a fortune.\n/exit\nAnother one, please.\n")
chat(one err ${WORK}/exit.txt models run tiny -n 8 --temperature 0)
expect_answers("${one}" 1 "a message, then /exit")
string(FIND "${err}" "[xonnx models run]" pos)
if(NOT pos EQUAL -1)
  message(FATAL_ERROR "the summary is printed only with --verbose:\n${err}")
endif()

# A conversation longer than the KV cache forgets its oldest exchanges and goes on; a message
# that alone does not fit is an error.
file(WRITE ${WORK}/long.txt "hello there\nagain and again and again\nthird\n")
chat(three err ${WORK}/long.txt models run tiny -n 8 --temperature 0 --max-length 40)
expect_answers("${three}" 3 "three messages in a 40-token cache")
expect_contains("${err}" "oldest exchange is forgotten" "the note of a full cache")
file(WRITE ${WORK}/hello.txt "hello there\n")
run_fails("raise --max-length" ${XONNX} models run tiny --max-length 8 INPUT_FILE ${WORK}/hello.txt)

run_fails("no model 'nope'" ${XONNX} models run nope)
run_fails("top-p" ${XONNX} models run tiny --top-p 2)
run_ok(${XONNX} models remove tiny)
run_fails("no model 'tiny'" ${XONNX} models run tiny)
file(REMOVE_RECURSE ${WORK})
