# The remedies for a drifted node: the agent's sysfs fixtures probed,
# verified and assessed; the rules validated by the model and fed to the
# planner with the node's predicted slices.
dt_add_suite(test_remedy SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_remedy.c
             LIBS dt_remedy dt_agent dt_plan)
set_tests_properties(test_remedy PROPERTIES FIXTURES_REQUIRED agent_sysfs)
