# The scripts users run beside the library, tested on small files kept in tests/data/.
#   script_plot  scripts/plot.py draws every kind of picture from tests/data/plot/ and exits 2
#                on bad input; skipped (status 77) where no python3 can import matplotlib.
find_program(ONELEARN_BASH bash)
if(ONELEARN_BASH)
  add_test(NAME script_plot
    COMMAND ${ONELEARN_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/scripts/test_plot.sh
            ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/script_plot)
  set_tests_properties(script_plot PROPERTIES LABELS scripts SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()
