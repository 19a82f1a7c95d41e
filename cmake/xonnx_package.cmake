# Installable libraries of the SDK ("components"). Each one is
#   - in the build tree: the CMake target xonnx::<name> (an alias of an in-tree target), for
#     projects that add_subdirectory(xonnx);
#   - installed: one static archive lib<output>.a that merges its in-tree static libraries and the
#     third-party archives they link (protobuf-lite, RE2, ...), the imported target xonnx::<name>
#     (cmake/xonnx_install.cmake: find_package(xonnx CONFIG [COMPONENTS ...])) and <pc>.pc.
#
#   xonnx_package_library(<name>
#     ALIAS_OF <target>          in-tree target behind xonnx::<name>
#     TARGETS <targets...>       in-tree static libraries merged into the archive
#     ARCHIVES <files...>        third-party static archives merged into it (neither: a
#                                headers-only component whose code is in what it REQUIRES)
#     SYSTEM_LIBS <names...>     shared libraries it needs on the device (-l<name>)
#     REQUIRES <components...>   other components it links (their archives come after it)
#     HEADERS <files...>         public headers, installed under include/<HEADER_DIR>
#     HEADER_DIR <dir>           (default: xonnx)
#     TREE_HEADERS <files...>    headers included by their source-tree path ("sdk/genai/tokenizer.h"):
#                                installed under include/xonnx/cxx/<that path>, a folder the
#                                target adds to the include path
#     PACKAGES <names...>        header-only packages its headers include, found with
#                                find_package(<name> CONFIG) and pkg-config's Requires (same name)
#     DESCRIPTION <text>)
# The main library is the component "xonnx" (libxonnx.a, xonnx::xonnx, xonnx.pc); others are
# lib xonnx_<name>.a, xonnx::<name>, xonnx-<name>.pc, e.g. sdk/genai as `genai`.
function(xonnx_package_library name)
  cmake_parse_arguments(P "" "ALIAS_OF;DESCRIPTION;HEADER_DIR"
                        "TARGETS;ARCHIVES;SYSTEM_LIBS;REQUIRES;HEADERS;TREE_HEADERS;PACKAGES" ${ARGN})
  if(name STREQUAL "xonnx")
    set(output xonnx)
    set(pc xonnx)
  else()
    set(output xonnx_${name})
    set(pc xonnx-${name})
  endif()
  if(NOT P_HEADER_DIR)
    set(P_HEADER_DIR xonnx)
  endif()
  add_library(xonnx::${name} ALIAS ${P_ALIAS_OF})
  set(archive "")

  if(P_TARGETS OR P_ARCHIVES)
    # The merged archive, rebuilt whenever one of its inputs changes.
    # Beside, not in, lib/: the in-tree libxonnx_<name>.a targets have the same names.
    set(archive ${PROJECT_BINARY_DIR}/package/lib/lib${output}.a)
    set(list_file ${CMAKE_CURRENT_BINARY_DIR}/lib${output}.inputs)
    set(content "")
    foreach(t IN LISTS P_TARGETS)
      string(APPEND content "$<TARGET_FILE:${t}>\n")
    endforeach()
    foreach(a IN LISTS P_ARCHIVES)
      string(APPEND content "${a}\n")
    endforeach()
    file(GENERATE OUTPUT ${list_file} CONTENT "${content}")
    add_custom_command(
      OUTPUT ${archive}
      COMMAND ${CMAKE_COMMAND} -DAR=${CMAKE_AR} -DRANLIB=${CMAKE_RANLIB} -DOUT=${archive}
              -DLIST=${list_file} -P ${PROJECT_SOURCE_DIR}/cmake/merge_archives.cmake
      DEPENDS ${P_TARGETS} ${P_ARCHIVES} ${list_file} ${PROJECT_SOURCE_DIR}/cmake/merge_archives.cmake
      COMMENT "Merging lib${output}.a (${P_TARGETS} + third-party archives)")
    add_custom_target(${output}_archive ALL DEPENDS ${archive})
  endif()

  set_property(GLOBAL APPEND PROPERTY XONNX_PACKAGE_COMPONENTS ${name})
  foreach(field archive output pc)
    set_property(GLOBAL PROPERTY XONNX_PACKAGE_${name}_${field} "${${field}}")
  endforeach()
  foreach(field DESCRIPTION HEADER_DIR HEADERS TREE_HEADERS PACKAGES SYSTEM_LIBS REQUIRES)
    set_property(GLOBAL PROPERTY XONNX_PACKAGE_${name}_${field} "${P_${field}}")
  endforeach()
endfunction()

# xonnx_select_ops(<target> ops.txt): selective builds (cmake/xonnx_select_ops.cmake.in), for
# projects that add_subdirectory(xonnx) and, installed, for find_package(xonnx) users.
file(STRINGS ${PROJECT_SOURCE_DIR}/runtime/ops/ops.def _xonnx_family_lines REGEX "^XONNX_OP_FAMILY\\(")
set(XONNX_OP_FAMILIES "")
foreach(_line IN LISTS _xonnx_family_lines)
  string(REGEX REPLACE "^XONNX_OP_FAMILY\\(([a-z0-9_]+)\\).*" "\\1" _family "${_line}")
  list(APPEND XONNX_OP_FAMILIES ${_family})
endforeach()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/runtime/ops/ops.def)
configure_file(${PROJECT_SOURCE_DIR}/cmake/xonnx_select_ops.cmake.in
               ${PROJECT_BINARY_DIR}/package/xonnx_select_ops.cmake @ONLY)
include(${PROJECT_BINARY_DIR}/package/xonnx_select_ops.cmake)
