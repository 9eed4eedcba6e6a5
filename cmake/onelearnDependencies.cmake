# The dependencies of onelearn's targets. Included by the build and, after install, by
# onelearnConfig.cmake, so both resolve them the same way.
#
# Required: Eigen 3.4, xtensor, Boost >= 1.81 headers (Boost.PFR; 1.74 has none).
# Optional: one target each, listed in onelearnComponents.cmake.
#
# Everything runs inside functions: a find_package(onelearn) must not change the caller's
# variables (BLA_VENDOR, MPI_CXX_SKIP_MPICXX, ...). Only these come out:
#   ONELEARN_HAVE_<NAME>           (the build) / onelearn_<name>_FOUND (the package): whether the
#                                  component's dependency was found
#   onelearn_FOUND, onelearn_NOT_FOUND_MESSAGE   (the package) when a required one is missing
# The imported targets the lookups create belong to the caller's directory, as with
# find_dependency.

include("${CMAKE_CURRENT_LIST_DIR}/onelearnComponents.cmake")

function(onelearn_find_dependencies)
  set(missing "")
  foreach(required IN ITEMS "Eigen3 3.4 NO_MODULE" "xtensor" "Boost 1.81 CONFIG")
    separate_arguments(arguments UNIX_COMMAND "${required}")
    list(GET arguments 0 name)
    find_package(${arguments} QUIET)
    if(NOT ${name}_FOUND)
      list(APPEND missing "${name}")
    endif()
  endforeach()
  if(missing)
    list(JOIN missing ", " missing_text)
    set(message "onelearn needs ${missing_text}, which could not be found")
    if(CMAKE_FIND_PACKAGE_NAME)  # inside onelearnConfig.cmake: fail the find_package politely
      set(onelearn_FOUND FALSE PARENT_SCOPE)
      set(onelearn_NOT_FOUND_MESSAGE "${message}" PARENT_SCOPE)
      return()
    endif()
    message(FATAL_ERROR "${message}")
  endif()

  foreach(component IN LISTS ONELEARN_ALL_COMPONENTS)
    string(TOUPPER "${component}" upper)
    set(found OFF)
    set(ready ON)
    foreach(needed IN LISTS ONELEARN_COMPONENT_${component}_NEEDS)
      string(TOUPPER "${needed}" needed_upper)
      if(NOT ONELEARN_HAVE_${needed_upper})
        set(ready OFF)
      endif()
    endforeach()
    if(ready)
      cmake_language(EVAL CODE "${ONELEARN_COMPONENT_${component}_FIND}")
      if(${ONELEARN_COMPONENT_${component}_FOUND})
        set(found ON)
      endif()
    endif()
    # Kept in this function's scope for the NEEDS of the next components, and handed out.
    set(ONELEARN_HAVE_${upper} ${found})
    set(ONELEARN_HAVE_${upper} ${found} PARENT_SCOPE)
    foreach(variable IN LISTS ONELEARN_COMPONENT_${component}_INCLUDES)
      set(${variable} "${${variable}}" PARENT_SCOPE)
    endforeach()
  endforeach()
endfunction()
