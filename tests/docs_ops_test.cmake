# docs/ops.md is the output of `xonnx info --ops --markdown`: fails when the registry changed
# (an op, a version range or a backend added) and the page was not regenerated.
execute_process(COMMAND ${XONNX} info --ops --markdown OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xonnx info --ops --markdown failed (${rc})")
endif()
file(READ ${DOC} current)
if(NOT generated STREQUAL current)
  message(FATAL_ERROR "${DOC} is not current: regenerate it with\n  build/bin/xonnx info --ops --markdown > docs/ops.md")
endif()
