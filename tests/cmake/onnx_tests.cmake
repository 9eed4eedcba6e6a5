# ONNX import: the executor's unit tests, and the conformance run over the ONNX backend test data
# that Debian's libonnx-testdata installs (.ci/run installs the package).
#
#   onnx_unit         unit_onnx/test_onnx.cpp: hand-derived graphs, ONNX-ML against scikit-learn
#                     numbers, every typed error; unit_onnx/test_onnx_export.cpp: every exported
#                     model passes the checker and predicts as onelearn does, in onelearn's
#                     executor and in onnxruntime (Node; skipped, saying why, without it);
#                     unit_onnx/test_onnx_import_estimators.cpp: ONNX-ML files (onelearn's and
#                     skl2onnx's layouts) become fitted estimators; unit_onnx/test_onnx_nn.cpp:
#                     nn::Sequential exported (checked in onnxruntime), read back, and PyTorch's
#                     exports imported as trainable Sequentials and fine-tuned
#   onnx_conformance  onelearn-onnx check over every node/test_* folder: asserts the summary line
#                     (a minimum passed count, 0 failed, 0 invalid, coverage >= 91%; the counting
#                     rule is in docs/onnx-operators.md)
#   onnx_conformance_pytorch  every pytorch-converted/ and pytorch-operator/ model passes
#   onnx_operators_doc  docs/onnx-operators.md equals `onelearn-onnx ops --markdown`
#
# Include after tools/ has been added (the test runs the onelearn-onnx target).
if(NOT TARGET onelearn::onnx)
  message(STATUS "ONNX tests not built: ONNX (libonnx-dev) was not found")
  return()
endif()

add_executable(onelearn_onnx_tests
  "${CMAKE_CURRENT_SOURCE_DIR}/unit_onnx/test_onnx.cpp"
  "${CMAKE_CURRENT_SOURCE_DIR}/unit_onnx/test_onnx_export.cpp"
  "${CMAKE_CURRENT_SOURCE_DIR}/unit_onnx/test_onnx_import_estimators.cpp"
  "${CMAKE_CURRENT_SOURCE_DIR}/unit_onnx/test_onnx_nn.cpp"
  "${CMAKE_CURRENT_SOURCE_DIR}/unit/main.cpp"
  "${CMAKE_CURRENT_SOURCE_DIR}/onnx_operators.cpp")
target_link_libraries(onelearn_onnx_tests PRIVATE onelearn_test_support onelearn::onnx)
# The export and import tests fit and export the same estimators (test_groups.cmake).
onelearn_test_group(onelearn_onnx_tests estimators
  unit_onnx/test_onnx_export.cpp unit_onnx/test_onnx_import_estimators.cpp)
# The operators compiled once, in onnx_operators.cpp, instead of in each of the four test files.
target_compile_definitions(onelearn_onnx_tests PRIVATE ONELEARN_ONNX_SEPARATE_OPERATORS)
add_test(NAME onnx_unit COMMAND onelearn_onnx_tests)
set_tests_properties(onnx_unit PROPERTIES LABELS "unit;onnx" TIMEOUT 300)

if(NOT TARGET onelearn-onnx)
  return()
endif()
set(ONELEARN_ONNX_TESTDATA_DIR "/usr/share/libonnx-testdata/data"
    CACHE PATH "ONNX backend test data (Debian package libonnx-testdata)")
# The bar (issue 17): every counted node test but the 74 that need operators the executor lacks
# passes (764 of 838, 91.2%; 94 excluded with a reason: training, random, sequence/optional,
# strings, float16/bfloat16, the other integer widths), nothing fails, and every model of
# pytorch-converted/ and pytorch-operator/ passes. Raise the numbers as operators land.
add_test(NAME onnx_conformance
  COMMAND onelearn-onnx check "${ONELEARN_ONNX_TESTDATA_DIR}/node")
set_tests_properties(onnx_conformance PROPERTIES
  LABELS onnx TIMEOUT 600
  PASS_REGULAR_EXPRESSION
    "\n(76[4-9]|7[7-9][0-9]|8[0-9][0-9]|9[0-9][0-9]) passed, 0 failed, [0-9]+ skipped, [0-9]+ excluded, 0 invalid; coverage (9[1-9]|100)\\.")
add_test(NAME onnx_conformance_pytorch
  COMMAND onelearn-onnx check "${ONELEARN_ONNX_TESTDATA_DIR}/pytorch-converted"
                              "${ONELEARN_ONNX_TESTDATA_DIR}/pytorch-operator")
set_tests_properties(onnx_conformance_pytorch PROPERTIES
  LABELS onnx TIMEOUT 600
  PASS_REGULAR_EXPRESSION "\n(11[7-9]|1[2-9][0-9]|[2-9][0-9][0-9]) passed, 0 failed, 0 skipped, 0 excluded, 0 invalid;")
foreach(dir node pytorch-converted pytorch-operator)
  if(NOT IS_DIRECTORY "${ONELEARN_ONNX_TESTDATA_DIR}/${dir}")
    message(STATUS "onnx_conformance disabled: no ${dir}/ in ${ONELEARN_ONNX_TESTDATA_DIR} "
                   "(apt-get install libonnx-testdata)")
    set_tests_properties(onnx_conformance onnx_conformance_pytorch PROPERTIES DISABLED TRUE)
  endif()
endforeach()

# docs/onnx-operators.md is generated from the executor's registry (scripts/onnx-operators-doc.sh
# rewrites it); this test fails when the two disagree.
add_test(NAME onnx_operators_doc
  COMMAND sh -c "\"$1\" ops --markdown | diff -u \"$2\" -" onnx_operators_doc
          $<TARGET_FILE:onelearn-onnx> "${PROJECT_SOURCE_DIR}/docs/onnx-operators.md")
set_tests_properties(onnx_operators_doc PROPERTIES LABELS "onnx;docs" TIMEOUT 60)
