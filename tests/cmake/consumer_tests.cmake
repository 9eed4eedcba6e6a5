# A downstream project builds against onelearn three ways (and a fourth, pkg-config, below) (nlohmann/json's tests/cmake_*):
# find_package after `cmake --install`, add_subdirectory, and FetchContent from a local path.
# Each configures, builds and runs tests/consumer in a build tree of its own.
set(consumer_source "${CMAKE_CURRENT_SOURCE_DIR}/consumer")
set(consumer_root "${CMAKE_CURRENT_BINARY_DIR}/consumer")
set(consumer_prefix "${consumer_root}/prefix")

add_test(NAME cmake_install
  COMMAND ${CMAKE_COMMAND} --install ${PROJECT_BINARY_DIR} --prefix ${consumer_prefix})
set_tests_properties(cmake_install PROPERTIES FIXTURES_SETUP onelearn_installed LABELS cmake)

set(consumer_common_args
  -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
  # The fastest compile: these tests are about the build, not speed; no debug information
  # either (tests/consumer/main.cpp: 17.7 CPU s against 22.9 with -g; it is compiled 5 times).
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0
  -DONELEARN_SOURCE_DIR=${PROJECT_SOURCE_DIR})
if(CMAKE_CXX_COMPILER_LAUNCHER)
  list(APPEND consumer_common_args -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER})
endif()

foreach(mode find_package add_subdirectory fetchcontent)
  set(build_dir "${consumer_root}/${mode}")
  set(extra_args)
  if(mode STREQUAL "find_package")
    # Only the installed package may be found: not this source tree, not a system install.
    list(APPEND extra_args -DCMAKE_PREFIX_PATH=${consumer_prefix} -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON)
    # The installed package must also provide the MPI component; one mode checking it is enough.
    list(APPEND extra_args -DONELEARN_CONSUMER_WITH_MPI=${ONELEARN_HAVE_MPI})
  endif()
  add_test(NAME cmake_consumer_${mode}
    COMMAND ${CMAKE_CTEST_COMMAND}
      --build-and-test "${consumer_source}" "${build_dir}"
      --build-generator "${CMAKE_GENERATOR}"
      --build-options -DONELEARN_CONSUME=${mode} ${consumer_common_args} ${extra_args}
      --test-command ${CMAKE_CTEST_COMMAND} --output-on-failure)
  set_tests_properties(cmake_consumer_${mode} PROPERTIES LABELS cmake TIMEOUT 600)
endforeach()
set_tests_properties(cmake_consumer_find_package PROPERTIES FIXTURES_REQUIRED onelearn_installed)

# pkg-config, as a Makefile-based project would use the installed tree: the core only.
find_program(ONELEARN_PKG_CONFIG pkg-config)
if(ONELEARN_PKG_CONFIG)
  add_test(NAME cmake_consumer_pkg_config
    COMMAND sh -c "PKG_CONFIG_PATH='${consumer_prefix}/${CMAKE_INSTALL_DATADIR}/pkgconfig' && export PKG_CONFIG_PATH && \
      flags=$('${ONELEARN_PKG_CONFIG}' --cflags onelearn) && \
      '${CMAKE_CXX_COMPILER}' $flags '${consumer_source}/main.cpp' -o '${consumer_root}/pkg_config_consumer' && \
      '${consumer_root}/pkg_config_consumer'")
  set_tests_properties(cmake_consumer_pkg_config PROPERTIES LABELS cmake TIMEOUT 600
    FIXTURES_REQUIRED onelearn_installed PASS_REGULAR_EXPRESSION "consumer: ok")
endif()
