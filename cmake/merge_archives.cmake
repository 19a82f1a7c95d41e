# Merges static archives into one (the installed libxonnx.a holds the runtime, the generated
# proto code and protobuf-lite). Run by xonnx_package_library() at build time:
#   cmake -DAR=<ar> -DRANLIB=<ranlib> -DOUT=<lib.a> -DLIST=<file with one archive per line> -P merge_archives.cmake
# GNU ar's MRI script (ADDLIB) copies every member, duplicates of a member name included, which
# extracting with `ar x` would overwrite.
file(STRINGS "${LIST}" inputs)
file(REMOVE "${OUT}" "${OUT}.tmp")
set(script "CREATE ${OUT}.tmp\n")
foreach(archive IN LISTS inputs)
  if(NOT EXISTS "${archive}")
    message(FATAL_ERROR "merge_archives: ${archive} does not exist")
  endif()
  string(APPEND script "ADDLIB ${archive}\n")
endforeach()
string(APPEND script "SAVE\nEND\n")
file(WRITE "${OUT}.mri" "${script}")
execute_process(COMMAND "${AR}" -M INPUT_FILE "${OUT}.mri" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "merge_archives: ${AR} -M failed (${rc}): ${err}")
endif()
execute_process(COMMAND "${RANLIB}" "${OUT}.tmp" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "merge_archives: ${RANLIB} ${OUT}.tmp failed")
endif()
file(RENAME "${OUT}.tmp" "${OUT}")
file(REMOVE "${OUT}.mri")
