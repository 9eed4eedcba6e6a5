# Installs the headers, the CMake package (find_package(onelearn [COMPONENTS <the lines of
# onelearnComponents.cmake>])) and a pkg-config file for the core target.
include(CMakePackageConfigHelpers)

set(ONELEARN_CMAKE_DIR "${CMAKE_INSTALL_DATADIR}/cmake/onelearn")  # header-only: arch-independent

install(DIRECTORY include/onelearn DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/include/onelearn/core/version.hpp"  # generated
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/onelearn/core")

# One export set per target, so a consumer without MPI (say) can still load the core targets.
install(TARGETS onelearn EXPORT onelearnTargets)
install(EXPORT onelearnTargets NAMESPACE onelearn:: DESTINATION "${ONELEARN_CMAKE_DIR}")
foreach(component IN LISTS onelearn_components)
  install(TARGETS onelearn_${component} EXPORT onelearn_${component}Targets)
  install(EXPORT onelearn_${component}Targets NAMESPACE onelearn:: DESTINATION "${ONELEARN_CMAKE_DIR}")
endforeach()

configure_package_config_file(cmake/onelearnConfig.cmake.in
  "${CMAKE_CURRENT_BINARY_DIR}/onelearnConfig.cmake"
  INSTALL_DESTINATION "${ONELEARN_CMAKE_DIR}")
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/onelearnConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES
  "${CMAKE_CURRENT_BINARY_DIR}/onelearnConfig.cmake"
  "${CMAKE_CURRENT_BINARY_DIR}/onelearnConfigVersion.cmake"
  cmake/onelearnDependencies.cmake
  cmake/onelearnComponents.cmake
  cmake/onelearnThrust.cmake
  DESTINATION "${ONELEARN_CMAKE_DIR}")

# pkg-config: the core (Eigen, xtensor, Boost headers). Header-only, so arch-independent
# (datadir), like the CMake package; relocatable: the prefix is found from the .pc file's own place.
configure_file(cmake/onelearn.pc.in "${CMAKE_CURRENT_BINARY_DIR}/onelearn.pc" @ONLY)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/onelearn.pc" DESTINATION "${CMAKE_INSTALL_DATADIR}/pkgconfig")
