# Types that miss a member must be rejected, and the compiler must say which member in one
# sentence (Eigen's failtest/, fmt's compile-error-test/). Each source names the message it
# expects on its first line:  // expect: <regular expression>
# and is compiled (syntax only) by a test whose pass condition is that message in the output.
file(GLOB onelearn_compile_fail_sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/compile_fail/*.cpp")

set(onelearn_syntax_flags -std=c++20 -fsyntax-only "-I${PROJECT_SOURCE_DIR}/include")
foreach(dep Eigen3::Eigen xtensor xtl Boost::headers)
  if(TARGET ${dep})
    get_target_property(dirs ${dep} INTERFACE_INCLUDE_DIRECTORIES)
    foreach(dir IN LISTS dirs)
      # The compiler's own directories (/usr/include) must stay where it puts them, or
      # #include_next in the C++ headers breaks.
      if(NOT dir IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
        list(APPEND onelearn_syntax_flags "-isystem${dir}")
      endif()
    endforeach()
  endif()
endforeach()

foreach(source IN LISTS onelearn_compile_fail_sources)
  get_filename_component(name "${source}" NAME_WE)
  file(STRINGS "${source}" expect_line LIMIT_COUNT 1 REGEX "^// expect: ")
  string(REGEX REPLACE "^// expect: " "" expected "${expect_line}")
  if(expected STREQUAL "")
    message(FATAL_ERROR "${source}: the first line must be '// expect: <regex of the error>'")
  endif()
  add_test(NAME compile_fail_${name}
    COMMAND ${CMAKE_CXX_COMPILER} ${onelearn_syntax_flags} "${source}")
  set_tests_properties(compile_fail_${name} PROPERTIES
    LABELS compile_fail PASS_REGULAR_EXPRESSION "${expected}")
endforeach()

# The control: the same harness accepts a type that has every member, so a failure above is
# the static check speaking, not a broken harness.
add_test(NAME compile_fail_control_compiles
  COMMAND ${CMAKE_CXX_COMPILER} ${onelearn_syntax_flags} "${CMAKE_CURRENT_SOURCE_DIR}/compile_fail/control/complete_estimator.cpp")
set_tests_properties(compile_fail_control_compiles PROPERTIES LABELS compile_fail)
