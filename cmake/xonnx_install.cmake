# Install rules, the CMake package (find_package(xonnx CONFIG)), pkg-config files and the .deb
# packages (CPack) for every library registered with xonnx_package_library().
# Install components: dev (headers, static archives, CMake and pkg-config files, docs),
# cli (the xonnx tool), shared (libxonnx.so; only on request: --component shared).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(XONNX_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/xonnx)
set(XONNX_PKGCONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH XONNX_PC_PREFIX_FROM_PCDIR ${CMAKE_INSTALL_PREFIX}/${XONNX_PKGCONFIG_DIR} ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" XONNX_PC_PREFIX_FROM_PCDIR "${XONNX_PC_PREFIX_FROM_PCDIR}")
set(XONNX_PACKAGE_OUT ${PROJECT_BINARY_DIR}/package)

get_property(XONNX_COMPONENT_LIST GLOBAL PROPERTY XONNX_PACKAGE_COMPONENTS)
foreach(XONNX_C_NAME IN LISTS XONNX_COMPONENT_LIST)
  foreach(field archive output pc DESCRIPTION HEADER_DIR HEADERS TREE_HEADERS PACKAGES SYSTEM_LIBS REQUIRES)
    get_property(_value GLOBAL PROPERTY XONNX_PACKAGE_${XONNX_C_NAME}_${field})
    string(TOUPPER ${field} _upper)
    set(XONNX_C_${_upper} "${_value}")
  endforeach()
  if(XONNX_C_ARCHIVE)
    install(FILES ${XONNX_C_ARCHIVE} DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
    set(XONNX_C_KIND STATIC)
    set(XONNX_C_PC_LIBS "-L\${libdir} -l${XONNX_C_OUTPUT}")
  else()  # headers only: the code is in the components it REQUIRES
    set(XONNX_C_KIND INTERFACE)
    set(XONNX_C_PC_LIBS "")
  endif()
  if(XONNX_C_HEADERS)
    install(FILES ${XONNX_C_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${XONNX_C_HEADER_DIR} COMPONENT dev)
  endif()
  set(XONNX_C_INCLUDE_DIRS "\${PACKAGE_PREFIX_DIR}/${CMAKE_INSTALL_INCLUDEDIR}")
  set(XONNX_C_PC_CFLAGS "-I\${includedir}")
  foreach(h IN LISTS XONNX_C_TREE_HEADERS)
    file(RELATIVE_PATH _rel ${PROJECT_SOURCE_DIR} ${h})
    get_filename_component(_dir ${_rel} DIRECTORY)
    install(FILES ${h} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/xonnx/cxx/${_dir} COMPONENT dev)
  endforeach()
  if(XONNX_C_TREE_HEADERS)
    list(APPEND XONNX_C_INCLUDE_DIRS "\${PACKAGE_PREFIX_DIR}/${CMAKE_INSTALL_INCLUDEDIR}/xonnx/cxx")
    string(APPEND XONNX_C_PC_CFLAGS " -I\${includedir}/xonnx/cxx")
  endif()

  # Other components this one links, as targets (CMake) and as pkg-config modules.
  set(XONNX_C_REQUIRES_TARGETS "")
  set(XONNX_C_PC_REQUIRES "")
  foreach(r IN LISTS XONNX_C_REQUIRES)
    get_property(_pc GLOBAL PROPERTY XONNX_PACKAGE_${r}_pc)
    list(APPEND XONNX_C_REQUIRES_TARGETS xonnx::${r})
    list(APPEND XONNX_C_PC_REQUIRES ${_pc})
  endforeach()
  foreach(p IN LISTS XONNX_C_PACKAGES)
    list(APPEND XONNX_C_REQUIRES_TARGETS ${p}::${p})
    list(APPEND XONNX_C_PC_REQUIRES ${p})
  endforeach()
  list(JOIN XONNX_C_PC_REQUIRES ", " XONNX_C_PC_REQUIRES)
  set(XONNX_C_PC_LIBS_PRIVATE "")
  foreach(lib IN LISTS XONNX_C_SYSTEM_LIBS)
    string(APPEND XONNX_C_PC_LIBS_PRIVATE "-l${lib} ")
  endforeach()
  if(XONNX_C_ARCHIVE)
    string(APPEND XONNX_C_PC_LIBS_PRIVATE "-lstdc++ -lm -pthread")
  endif()

  configure_file(${PROJECT_SOURCE_DIR}/cmake/xonnx-component-targets.cmake.in
                 ${XONNX_PACKAGE_OUT}/xonnx-${XONNX_C_NAME}-targets.cmake @ONLY)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/xonnx.pc.in ${XONNX_PACKAGE_OUT}/${XONNX_C_PC}.pc @ONLY)
  install(FILES ${XONNX_PACKAGE_OUT}/xonnx-${XONNX_C_NAME}-targets.cmake DESTINATION ${XONNX_CMAKE_DIR} COMPONENT dev)
  install(FILES ${XONNX_PACKAGE_OUT}/${XONNX_C_PC}.pc DESTINATION ${XONNX_PKGCONFIG_DIR} COMPONENT dev)
endforeach()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/xonnxConfig.cmake.in
                              ${XONNX_PACKAGE_OUT}/xonnxConfig.cmake INSTALL_DESTINATION ${XONNX_CMAKE_DIR})
# 0.x: a new minor version may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${XONNX_PACKAGE_OUT}/xonnxConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${XONNX_PACKAGE_OUT}/xonnxConfig.cmake ${XONNX_PACKAGE_OUT}/xonnxConfigVersion.cmake
              ${XONNX_PACKAGE_OUT}/xonnx_select_ops.cmake
        DESTINATION ${XONNX_CMAKE_DIR} COMPONENT dev)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/c_api.md
              ${PROJECT_SOURCE_DIR}/docs/deploy.md ${PROJECT_SOURCE_DIR}/docs/packaging.md
              ${PROJECT_SOURCE_DIR}/docs/cli.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT dev)

if(TARGET xonnx_shared)
  set(XONNX_SHARED_FILE libxonnx.so.${PROJECT_VERSION})
  set(XONNX_SHARED_SONAME libxonnx.so.${PROJECT_VERSION_MAJOR})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/xonnx-shared-targets.cmake.in
                 ${XONNX_PACKAGE_OUT}/xonnx-shared-targets.cmake @ONLY)
  install(TARGETS xonnx_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT shared EXCLUDE_FROM_ALL)
  install(FILES ${XONNX_PACKAGE_OUT}/xonnx-shared-targets.cmake DESTINATION ${XONNX_CMAKE_DIR}
          COMPONENT shared EXCLUDE_FROM_ALL)
endif()
if(TARGET xonnx)
  install(TARGETS xonnx RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
endif()

include(${PROJECT_SOURCE_DIR}/cmake/xonnx_cpack.cmake)
