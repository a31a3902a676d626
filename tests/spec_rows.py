"""Every requirement row of the five specs, mapped to the tests that check it
(issue 30, point 15).  ``tests/test_spec_rows.py`` checks the table: each row
names at least one test or says why it is out of scope, and each test named
exists where the test runner collects it.

A row is one normative statement of a spec ("must", "shall", "is an error",
"throws", "should" in the designs), in the spec's order.  ``tests`` holds test
ids: ``path::function`` (or ``path::Class::method``) for pytest, or the path
of a golden lit test under ``tests/lit``.  A row may name several tests; rows
whose rule another change is adding tests for list the tests that cover them
now (``issue_point`` names the point), and more ids are simply appended to
the tuple.  ``out_of_scope`` says
why a row cannot apply to this project (and then ``tests`` is empty).

The specs: ``if_device`` (the if_device implementation design),
``vf`` (the virtual-functions implementation design), ``device_global``
(sycl_ext_oneapi_device_global), ``graph`` (sycl_ext_oneapi_graph and, where
it adds or changes a rule, its newer revision: ``graph-ja``).
"""
from __future__ import annotations

from typing import NamedTuple


class Row(NamedTuple):
    id: str                     # <spec>-<n>
    where: str                  # the spec's section
    rule: str                   # the requirement, in short
    tests: tuple[str, ...] = ()
    out_of_scope: str = ""      # why no test can apply here
    issue_point: str = ""       # "30.N": a point of issue 30 whose fix adds this row's remaining tests


#: the points of issue 30 fixed beside this table (graphs 1-6, device_global 7-11): the tests each
#: fix added (``FIXED``) are appended to the rows naming that point, after the table
OPEN_POINTS: tuple[str, ...] = ()


RT = "tests/runtime/"
G, GS, DG = RT + "test_graph.py::", RT + "test_graph_spec.py::", RT + "test_device_global.py::"
GAP = RT + "test_spec_row_gaps.py::"
VFI = "tests/postlink/test_vf_images.py::"
VFX = RT + "test_vf_design_examples.py::"
LIT = "tests/lit/"
NO_BUFFERS = "the runtime has USM only: no buffers or accessors exist to use in a graph"
NOT_HERE = "the extension it names is not part of minisycl (no API to call)"

ROWS: tuple[Row, ...] = (
    # -- if_device design -------------------------------------------------------------
    Row("if_device-1", "Multi-pass implementation", "if_device runs its function on the device only, if_host on "
        "the host only, otherwise runs the other branch",
        (RT + "test_runtime.py::test_if_device_and_if_host", LIT + "frontend/if-device.ksl")),
    Row("if_device-2", "Device headers", "the branches become calls to helpers marked \"sycl-call-if-on-device\" / "
        "\"sycl-call-if-on-host\", noinline until the split", (LIT + "frontend/if-device.ksl",)),
    Row("if_device-3", "Changes to the front-end", "the bodies of \"sycl-call-if-on-host\" functions are skipped when "
        "the kernels' static call tree is built: no device diagnostics for host-only code",
        (LIT + "passes/split-if-device/host-only-call.ll", LIT + "frontend/diagnostics/device-calls.ksl")),
    Row("if_device-4", "Changes to the front-end", "one IR stream for host and device keeps the calls and the full "
        "bodies of both helpers", (LIT + "passes/split-if-device/single-source.ksl",)),
    Row("if_device-5", "New IR pass", "the pass finds device code by the kernels' static call tree",
        (LIT + "passes/split-if-device/dpcpp-style.ll", "tests/passes/test_pipeline.py::test_device_half")),
    Row("if_device-6", "New IR pass", "device IR: bodies of \"sycl-call-if-on-host\" functions are deleted, "
        "leaving empty functions", ("tests/passes/test_pipeline.py::test_device_half",)),
    Row("if_device-7", "New IR pass", "host IR: bodies of \"sycl-call-if-on-device\" functions are deleted",
        ("tests/passes/test_pipeline.py::test_host_half", LIT + "passes/split-if-device/single-source.ksl")),
    Row("if_device-8", "New IR pass", "after the split the pass removes noinline from these functions",
        ("tests/passes/test_pipeline.py::test_device_half",)),

    # -- virtual-functions design -------------------------------------------------------
    Row("vf-1", "Overview", "the Overview example works on devices with and without fp64",
        (VFX + "test_design_example_runs_with_and_without_fp64", LIT + "postlink/virtual-functions/design-overview.ksl")),
    Row("vf-2", "Changes to the SYCL header files", "indirectly_callable gives \"indirectly-callable\"=\"set\", "
        "calls_indirectly gives \"calls-indirectly\"=\"set1,set2\"", (LIT + "frontend/virtual-functions.ksl",)),
    Row("vf-3", "Changes to the compiler front-end", "a virtual method with indirectly_callable is device code",
        (LIT + "frontend/virtual-functions.ksl", RT + "test_runtime.py::test_virtual_call_per_work_item")),
    Row("vf-4", "Changes to the compiler front-end", "a virtual method without indirectly_callable is not device code",
        (LIT + "passes/split-if-device/host-only-virtual.ksl", RT + "test_host_only_virtuals.py::test_calling_the_host_only_method_raises_runtime_naming_it")),
    Row("vf-5", "Aspects propagation", "a kernel gets the aspects of every set it names in calls_indirectly",
        ("tests/passes/test_pipeline.py::test_aspects", LIT + "passes/propagate-aspects/virtual-functions-1.ll")),
    Row("vf-6", "Aspects propagation", "a kernel that only constructs objects (vtable references) gets no aspect "
        "from the virtual functions", ("tests/passes/test_pipeline.py::test_aspects",
                                       LIT + "postlink/virtual-functions/design-overview.ksl")),
    Row("vf-7", "Device code split and device images", "a kernel without calls_indirectly may construct objects "
        "whose virtual functions use aspects the device lacks, without an exception",
        (VFX + "test_design_example_runs_with_and_without_fp64", RT + "test_runtime.py::test_fp64_set_on_device_without_fp64")),
    Row("vf-8", "JIT flow", "whatever the split mode, indirectly_callable functions are outlined, all functions of "
        "one set into one dedicated image", (VFI + "test_one_image_per_set_whatever_the_mode_and_aspects",
                                             LIT + "postlink/virtual-functions/dummy.ll",
                                             VFI + "test_no_kernel_carries_another_kernels_requirements_and_sets_stay_whole")),
    Row("vf-9", "JIT flow", "virtual functions in the kernels' images become declarations",
        (LIT + "postlink/virtual-functions/properties.ll", LIT + "postlink/virtual-functions/design-overview.ksl")),
    Row("vf-10", "JIT flow", "an image whose virtual functions use optional features is cloned with every body "
        "emptied (the dummy image)", (LIT + "postlink/virtual-functions/dummy.ll", VFI + "test_one_image_per_set_whatever_the_mode_and_aspects")),
    Row("vf-11", "AOT flow", "post-link reads the target's device config and drops the virtual functions of sets "
        "using optional features the target lacks", ("tests/postlink/test_split.py::test_aot_flow_of_the_design_example",
                                                     LIT + "postlink/aot/design-split-example.ksl")),
    Row("vf-12", "AOT flow", "the decision is per set: the union of the aspects of the set's functions",
        (LIT + "postlink/aot/design-split-example.ksl", "tests/postlink/test_split.py::test_aot_flow_of_the_design_example")),
    Row("vf-13", "New device image properties", "in AOT mode no \"SYCL/virtual functions\" properties",
        ("tests/postlink/test_split.py::test_aot_flow_of_the_design_example", LIT + "postlink/aot/design-split-example.ksl")),
    Row("vf-14", "New device image properties", "a set image has virtual-functions-set, a dummy also dummy-image=1",
        (LIT + "postlink/virtual-functions/dummy.ll", LIT + "postlink/virtual-functions/design-overview.ksl")),
    Row("vf-15", "New device image properties", "a kernel image has calls-virtual-functions-set and "
        "creates-virtual-functions-set", (LIT + "postlink/virtual-functions/properties.ll",
                                          LIT + "postlink/virtual-functions/design-overview.ksl")),
    Row("vf-16", "Changes to the runtime", "calls-virtual-functions-set links every image of each set",
        (RT + "test_runtime.py::test_construct_then_call_default_and_named_sets",)),
    Row("vf-17", "Changes to the runtime", "creates-virtual-functions-set links the set image the device supports, "
        "else its dummy", (RT + "test_runtime.py::test_fp64_set_on_device_without_fp64",)),
    Row("vf-18", "Changes to the runtime", "several images may provide one set (shared libraries): all are linked",
        (RT + "test_runtime.py::test_set_provided_by_several_bundles",)),
    Row("vf-19", "Changes to the runtime", "a kernel calling a set that uses an aspect the device lacks is refused "
        "(runtime diagnostics through the propagated aspects)",
        (RT + "test_runtime.py::test_fp64_set_on_device_without_fp64", VFX + "test_design_example_runs_with_and_without_fp64")),
    Row("vf-20", "Changes to the runtime", "caches need no change: (kernel, device) fixes the images linked",
        (RT + "test_runtime.py::test_second_kernel_of_same_images_compiles_nothing",)),
    Row("vf-21", "Device code split (optional kernel features)", "-split=none still keeps kernels of different "
        "optional features apart, so the examples run without fp64",
        (VFI + "test_none_keeps_kernels_of_different_optional_features_apart", VFX + "test_design_example_runs_with_and_without_fp64",
         VFI + "test_no_kernel_carries_another_kernels_requirements_and_sets_stay_whole")),

    # -- sycl_ext_oneapi_device_global --------------------------------------------------
    Row("device_global-1", "Feature test macro", "SYCL_EXT_ONEAPI_DEVICE_GLOBAL is defined",
        (GS + "test_feature_test_constants",)),
    Row("device_global-2", "Representation", "before C++20: T trivially default constructible; storage "
        "zero-initialised before first access", (DG + "test_unused_global_reads_zero_then_round_trips",
                                                DG + "test_zero_initialised_globals_store_no_bytes_and_read_zero")),
    Row("device_global-3", "Representation", "C++20: constructor arguments forwarded to a constexpr constructor of T",
        (RT + "test_language_rows.py::test_device_global_constructed_at_compile_time",
         LIT + "frontend/device-global-constructors.ksl"), issue_point="30.9"),
    Row("device_global-4", "Representation", "T must be trivially destructible",
        (LIT + "frontend/diagnostics/device-global-constructors.ksl",)),
    Row("device_global-5", "Representation", "a constructor that cannot be evaluated at compile time is an error",
        (LIT + "frontend/diagnostics/device-global-constructors.ksl", "tests/frontend/test_constexpr.py::test_errors_name_the_rule")),
    Row("device_global-6", "Representation", "get(), operator[], multi_ptr access and conversion to T& on the device",
        (DG + "test_operators", RT + "test_language_rows.py::test_device_global_multi_ptr_and_properties")),
    Row("device_global-7", "Representation", "copy construction and copy assignment are deleted",
        issue_point="30.8"),
    Row("device_global-8", "Representation", "operator-> only when T supports it", issue_point="30.8"),
    Row("device_global-9", "Properties", "has_property / get_property answer the property list; get_property of a "
        "missing property is a compile-time error", (LIT + "frontend/diagnostics/members.ksl",
                                                    RT + "test_language_rows.py::test_device_global_multi_ptr_and_properties"), issue_point="30.10"),
    Row("device_global-10", "Restrictions on creating", "declared at namespace scope or as a static member only "
        "(not a local, not a non-static member, not by new)", (LIT + "frontend/diagnostics/device-rules.ksl",)),
    Row("device_global-11", "Restrictions on creating", "a static member only if publicly accessible",
        issue_point="30.7"),
    Row("device_global-12", "Restrictions on creating", "a device_global variable is not itself an array",
        (LIT + "frontend/diagnostics/device-rules.ksl",)),
    Row("device_global-13", "Restrictions on creating", "not shadowed by an identifier of an inline namespace",
        out_of_scope="the kernel language has no namespaces, so nothing can shadow a device_global that way"),
    Row("device_global-14", "Properties: device_image_scope", "kernels that directly access an image-scope variable "
        "must all be in one image: diagnosed", (LIT + "postlink/device-globals/image-scope.ll",
                                               DG + "test_sycl_external_across_files_and_image_scope_in_two_images")),
    Row("device_global-15", "Properties: device_image_scope", "initialised before first access, by a kernel or a copy",
        (DG + "test_copy_before_first_use_full_and_partial", DG + "test_image_scope_copies")),
    Row("device_global-16", "Properties: device_image_scope", "one instance per device shared by all kernels of a "
        "context, whatever their image", (DG + "test_persistence_across_kernels_and_images",
                                          DG + "test_two_contexts_on_one_device_are_independent",
                                          DG + "test_two_devices_have_independent_instances")),
    Row("device_global-17", "Properties: host_access", "host_access read/write/none restrict host copies",
        (DG + "test_errors", LIT + "frontend/device-globals.ksl")),
    Row("device_global-18", "Properties: init_mode, implement_in_csr", "FPGA-only properties are accepted and "
        "carried, with no effect elsewhere", (DG + "test_init_mode_and_csr_reach_the_bundle",)),
    Row("device_global-19", "Relaxed SYCL 2020 restrictions", "a device_global may be odr-used in device code though "
        "not const, constexpr or constant-initialised; other file-scope variables may not",
        (LIT + "frontend/diagnostics/work-groups.ksl", DG + "test_persistence_across_kernels_and_images")),
    Row("device_global-20", "Copy and memcpy", "copy to a device_global writing past its end throws errc::invalid",
        (RT + "test_device_global_counts.py::test_a_start_index_with_the_default_count_is_out_of_bounds_both_ways",
         RT + "test_device_global_counts.py::test_bad_counts_offsets_and_host_memory")),
    Row("device_global-21", "Copy and memcpy", "copy from a device_global reading past its end throws errc::invalid",
        (RT + "test_device_global_counts.py::test_a_start_index_with_the_default_count_is_out_of_bounds_both_ways",)),
    Row("device_global-22", "Copy and memcpy", "memcpy to or from a device_global past its end throws errc::invalid",
        (RT + "test_device_global_counts.py::test_bad_counts_offsets_and_host_memory", DG + "test_errors")),
    Row("device_global-23", "Copy and memcpy", "an image-scope variable in more than one image: copy and memcpy "
        "throw errc::invalid", (DG + "test_sycl_external_across_files_and_image_scope_in_two_images",)),
    Row("device_global-24", "Copy and memcpy", "an image-scope variable no kernel of its image accesses: copy and "
        "memcpy throw errc::kernel_not_supported", (DG + "test_image_scope_global_no_kernel_uses",)),
    Row("device_global-25", "Copy and memcpy", "the default count is the whole of T; an explicit count copies that "
        "many from startIndex", (RT + "test_device_global_counts.py::test_the_default_count_is_the_whole_of_t",
                                 RT + "test_device_global_counts.py::test_an_explicit_count_that_fits_from_a_start_index")),
    Row("device_global-26", "Copy and memcpy", "the handler forms behave as the queue forms, with dependencies",
        (DG + "test_handler_forms_and_dependencies",)),
    Row("device_global-27", "Copy and memcpy", "T must be device copyable",
        out_of_scope="the language has no user-defined copy operations or destructors (no 'operator', destructors "
                     "refused): every T is trivially copyable, so device copyable"),
    Row("device_global-28", "Relaxed restrictions", "a pointer to the allocation is not available to the host "
        "program", out_of_scope="no host API of the runtime yields a device_global's address (copy and memcpy "
                                "take the handle); nothing to refuse"),
    Row("device_global-29", "Graph interaction", "device_global copy and memcpy cannot be graph nodes",
        (DG + "test_copy_to_device_global_in_a_graph_node_is_invalid",)),

    # -- sycl_ext_oneapi_graph -----------------------------------------------------------
    Row("graph-1", "Feature test macro", "SYCL_EXT_ONEAPI_GRAPH is defined", (GS + "test_feature_test_constants",)),
    Row("graph-2", "Device aspects", "devices report ext_oneapi_graph / ext_oneapi_limited_graph; graph on a device "
        "without support is invalid", (GS + "test_devices_without_graph_support",)),
    Row("graph-3", "Node", "get_node_from_event of an event not from a graph node throws invalid",
        (GAP + "test_node_from_an_event_of_no_graph_is_invalid",)),
    Row("graph-4", "Node", "update_range / update_nd_range with other dimensions, or on a non-kernel node, throw invalid",
        (G + "test_update_errors", G + "test_dynamic_parameters")),
    Row("graph-5", "Node", "node queries: type, predecessors, successors, root nodes, all nodes",
        (G + "test_basic_explicit_dag", G + "test_in_order_record_and_replay")),
    Row("graph-6", "Dynamic command group", "an empty cgfList throws invalid", (G + "test_dynamic_command_group",)),
    Row("graph-7", "Dynamic command group", "command-group functions that are not kernels (newer revision: nor host "
        "tasks) are refused; all must be of one type", (G + "test_dynamic_command_group",), issue_point="30.5"),
    Row("graph-8", "Dynamic command group", "set_active_index with an invalid index throws invalid",
        (G + "test_dynamic_command_group",)),
    Row("graph-9", "Dynamic command group", "all command groups have identical dependencies: the topology does not "
        "change", (GS + "test_dynamic_command_group_runs_when_made_and_keeps_dependencies",)),
    Row("graph-10", "Dynamic command group", "a group using buffers without assume_buffer_outlives_graph throws",
        out_of_scope=NO_BUFFERS),
    Row("graph-11", "Dynamic parameters", "a dynamic_parameter updates its kernel argument on update(node)",
        (G + "test_dynamic_parameters", G + "test_set_arg_registers_dynamic_parameters"), issue_point="30.3"),
    Row("graph-12", "Dynamic parameters", "dynamic parameters only in kernel nodes of the explicit API",
        (GS + "test_dynamic_parameters_only_in_explicit_kernel_nodes",)),
    Row("graph-13", "Executable graph update", "update needs property::graph::updatable at finalize",
        (G + "test_update_errors",)),
    Row("graph-14", "Executable graph update", "update(node) of a node not in the graph throws invalid",
        (G + "test_update_errors",)),
    Row("graph-15", "Executable graph update", "update(nodes): every node must be part of the graph and updatable",
        (G + "test_update_errors", RT + "test_cuda_graph_fake.py::test_refused_second_node_update_rolls_the_first_back")),
    Row("graph-16", "Executable graph update", "an update takes effect on the next submission of the executable graph",
        (G + "test_dynamic_parameters", RT + "test_graph_update_cost.py::test_in_place_update_and_a_new_range")),
    Row("graph-17", "Whole graph update", "source and target: same device and context",
        (GAP + "test_whole_graph_update_needs_the_same_context_and_device",)),
    Row("graph-18", "Whole graph update", "same number of nodes and edges, edges between corresponding nodes, "
        "nodes added in the same order", (GS + "test_whole_graph_update_needs_corresponding_edges", G + "test_whole_graph_update")),
    Row("graph-19", "Whole graph update", "corresponding nodes have the same kernel (and, newer revision, the same "
        "node_type)", (GS + "test_whole_graph_update_node_types",)),
    Row("graph-20", "Whole graph update", "unsupported node types in the source throw invalid",
        (GS + "test_whole_graph_update_node_types",)),
    Row("graph-21", "Whole graph update", "newer revision: neither graph may hold async_malloc/async_free nodes",
        (G + "test_graph_owned_memory_restrictions",), issue_point="30.4"),
    Row("graph-22", "Graph properties", "no_cycle_check skips the cycle check of make_edge", (G + "test_cycles",)),
    Row("graph-23", "Graph properties", "assume_buffer_outlives_graph is accepted", (GS + "test_begin_recording_properties_and_state_enums",)),
    Row("graph-24", "Graph properties", "enable_profiling at finalize is needed for profiling information",
        (GS + "test_profiling_needs_enable_profiling_at_finalize",)),
    Row("graph-25", "command_graph constructor", "a device not associated with the context throws invalid",
        (GS + "test_executable_graph_only_on_its_device_and_context",)),
    Row("graph-26", "command_graph constructor", "a device without graph support throws invalid",
        (GS + "test_devices_without_graph_support",)),
    Row("graph-27", "command_graph::add", "add while a queue records to the graph throws invalid",
        (G + "test_explicit_api_while_recording_and_waits",)),
    Row("graph-28", "command_graph::add", "a command using a buffer without assume_buffer_outlives_graph throws",
        out_of_scope=NO_BUFFERS),
    Row("graph-29", "command_graph::add", "a non-kernel command group registering a dynamic_parameter throws invalid",
        (GS + "test_dynamic_parameters_only_in_explicit_kernel_nodes",)),
    Row("graph-30", "command_graph::add", "the command-group function runs synchronously at add",
        (GS + "test_dynamic_command_group_runs_when_made_and_keeps_dependencies",)),
    Row("graph-31", "command_graph::add(dynamic_command_group)", "add while recording, or with a group of another "
        "graph, throws invalid", (G + "test_dynamic_command_group", G + "test_explicit_api_while_recording_and_waits")),
    Row("graph-32", "command_graph::make_edge", "make_edge while recording throws invalid",
        (G + "test_explicit_api_while_recording_and_waits",)),
    Row("graph-33", "command_graph::make_edge", "src or dest not in the graph throws invalid", (G + "test_cycles",)),
    Row("graph-34", "command_graph::make_edge", "src and dest the same node throws invalid", (G + "test_cycles",)),
    Row("graph-35", "command_graph::make_edge", "a cycle throws invalid and the edge is not made", (G + "test_cycles",)),
    Row("graph-36", "command_graph::print_graph", "writes a DOT description; verbose adds node details",
        (G + "test_print_graph",), issue_point="30.6"),
    Row("graph-37", "command_graph::print_graph", "an invalid path or extension or a failed write throws invalid",
        (GS + "test_print_graph_to_an_unwritable_path", G + "test_print_graph")),
    Row("graph-38", "command_graph::finalize", "finalize makes an executable graph; several from one graph are "
        "independent", (G + "test_two_executable_graphs_are_independent_and_serialised",)),
    Row("graph-39", "command_graph::finalize (newer revision)", "finalize throws feature_not_supported when the "
        "device cannot run a command of the graph", (GS + "test_finalize_refuses_commands_the_device_cannot_run",)),
    Row("graph-40", "begin_recording", "a queue already recording throws invalid",
        (G + "test_explicit_api_while_recording_and_waits",)),
    Row("graph-41", "begin_recording", "a queue of another device or context throws invalid",
        (G + "test_recording_queue_on_other_device",)),
    Row("graph-42", "begin_recording(queues)", "any queue already recording or of another device/context throws",
        (GAP + "test_recording_a_list_of_queues_refuses_one_already_recording",
         GS + "test_begin_recording_properties_and_state_enums")),
    Row("graph-43", "end_recording", "a queue recording to a different graph throws invalid",
        (G + "test_explicit_api_while_recording_and_waits",)),
    Row("graph-44", "end_recording(queues)", "any queue recording to a different graph throws invalid",
        (GAP + "test_recording_a_list_of_queues_refuses_one_already_recording",)),
    Row("graph-45", "Queue state", "ext_oneapi_get_state reports executing or recording",
        (GS + "test_begin_recording_properties_and_state_enums", G + "test_scenarios_both_ways")),
    Row("graph-46", "Queue recording", "commands submitted while recording become nodes, edges from events and "
        "in-order queues", (G + "test_in_order_record_and_replay", G + "test_multi_queue_recording_with_events")),
    Row("graph-47", "Queue recording", "a queue submitting a command that depends on a recorded event joins the "
        "recording (transitive recording)", (G + "test_transitive_recording_through_events",
                                             GS + "test_transitive_recording_is_undone_when_the_command_is_refused")),
    Row("graph-48", "Queue recording", "the event of a recorded command cannot be used outside its recording scope",
        (GS + "test_recorded_event_is_refused_after_its_recording_ends",), issue_point="30.2"),
    Row("graph-49", "queue::ext_oneapi_graph", "submitting an executable graph runs it; depends_on orders it",
        (G + "test_basic_explicit_dag", G + "test_host_tasks_keep_order")),
    Row("graph-50", "queue::ext_oneapi_graph", "an executable graph runs only on a queue of its device and context",
        (GS + "test_executable_graph_only_on_its_device_and_context",)),
    Row("graph-51", "queue::ext_oneapi_graph", "a modifiable graph cannot be submitted",
        (RT + "test_api_misuse.py::test_a_modifiable_graph_submitted_as_executable_is_invalid",)),
    Row("graph-52", "Sub-graphs", "an executable graph added as a node of another graph runs as part of it",
        (G + "test_sub_graph", RT + "test_cuda_graph_fake.py::test_subgraph_runs_command_by_command")),
    Row("graph-53", "Sub-graphs (newer revision)", "a graph with graph-owned allocations cannot be a sub-graph",
        (G + "test_graph_owned_memory_restrictions",), issue_point="30.4"),
    Row("graph-54", "Handler", "handler::ext_oneapi_graph on a queue of another device/context throws invalid",
        (GS + "test_executable_graph_only_on_its_device_and_context",)),
    Row("graph-55", "handler::set_arg / require", "called while recording or in a normal submission throws invalid",
        (GS + "test_dynamic_parameters_only_in_explicit_kernel_nodes", G + "test_set_arg_registers_dynamic_parameters")),
    Row("graph-56", "handler::set_arg / require", "a dynamic parameter of another graph throws invalid (removed by "
        "the newer revision: parameters are made without a graph)", (G + "test_set_arg_registers_dynamic_parameters",), issue_point="30.3"),
    Row("graph-57", "Exception safety", "a graph that goes away ends the recording of its queues",
        (G + "test_dropping_the_graph_ends_recording",)),
    Row("graph-58", "Queue limitations while recording", "wait on a recorded event throws invalid",
        (G + "test_explicit_api_while_recording_and_waits",)),
    Row("graph-59", "Queue limitations while recording", "get_profiling_info / status of a recorded event throws invalid",
        (GS + "test_recorded_event_is_refused_after_its_recording_ends",)),
    Row("graph-60", "Queue limitations while recording", "a host-side wait on a recording queue throws invalid",
        (G + "test_explicit_api_while_recording_and_waits",)),
    Row("graph-61", "Buffer limitations", "write-back buffers and host accessors of recorded buffers are errors",
        out_of_scope=NO_BUFFERS),
    Row("graph-62", "Interaction with other extensions", "enqueue_native_command cannot be a node (newer revision: "
        "it may be recorded)", out_of_scope=NOT_HERE),
    Row("graph-63", "Interaction with other extensions", "bindless-image commands cannot be nodes", out_of_scope=NOT_HERE),
    Row("graph-64", "Interaction with other extensions", "device_global copy/memcpy cannot be nodes: invalid",
        (DG + "test_copy_to_device_global_in_a_graph_node_is_invalid",), issue_point="30.2"),
    Row("graph-65", "Interaction with other extensions", "discard_event events cannot make graph edges",
        out_of_scope="queues have no discard_events property here"),
    Row("graph-66", "Interaction with other extensions", "a barrier added through the explicit API throws invalid; "
        "recorded barriers become nodes", (G + "test_explicit_api_while_recording_and_waits",
                                           G + "test_barrier_in_record_and_replay", GS + "test_recorded_barrier_with_wait_list")),
    Row("graph-67", "Interaction with other extensions", "memcpy2d commands cannot be nodes", out_of_scope=NOT_HERE),
    Row("graph-68", "Interaction with other extensions", "work_group_scratch_memory cannot be used in nodes",
        out_of_scope=NOT_HERE),
    Row("graph-69", "Graph-owned memory (newer revision)", "async_malloc/async_free nodes, explicit and recorded, "
        "usable by every node kind", (GS + "test_graph_owned_memory_in_every_node_kind", G + "test_async_alloc_reuse")),
    Row("graph-70", "Graph-owned memory (newer revision)", "zero_init pools are zeroed at each finalize; "
        "get_required_mem_size", (GS + "test_memory_pools_zero_init_and_required_size",)),
    Row("graph-71", "Graph-owned memory (newer revision)", "only one executable graph of such a graph at a time; "
        "such nodes cannot be updated", (G + "test_graph_owned_memory_restrictions",
                                         GAP + "test_a_graph_owning_memory_has_one_executable_graph_and_is_no_recorded_command")),
    Row("graph-72", "Graph-owned memory (newer revision)", "allocations that are not device allocations are invalid",
        (GS + "test_non_device_graph_allocations_are_invalid",)),
    Row("graph-73", "Host tasks (newer revision)", "host-task nodes run in order and are updatable",
        (G + "test_host_tasks_keep_order", RT + "test_cuda_graph_fake.py::test_host_task_node_order_and_its_exception")),
    Row("graph-74", "Resources (newer revision)", "an executable graph's resources are released only after its "
        "pending submissions finish", (RT + "test_lifetimes.py::test_device_global_handle_event_and_graph_outlive_their_program",)),
    Row("graph-75", "Depends-On property", "property::node::depends_on makes edges from the listed nodes",
        (G + "test_basic_explicit_dag",)),
    Row("graph-76", "Depends-On-All-Leaves property", "a node added with depends_on_all_leaves depends on every "
        "current leaf", (GAP + "test_depends_on_all_leaves_makes_a_node_after_every_leaf",)),
    Row("graph-77", "queue::ext_oneapi_graph (newer revision)", "a graph owning memory submitted to a recording "
        "queue (or through its handler) throws invalid",
        (GAP + "test_a_graph_owning_memory_has_one_executable_graph_and_is_no_recorded_command",)),
    Row("graph-78", "Graph state", "finalize leaves the modifiable graph as it was; nodes added later are not part "
        "of the executable graph", (GS + "test_whole_graph_update_needs_corresponding_edges",)),
    Row("graph-79", "Execution range updates", "update_range / update_nd_range of a kernel node take effect after "
        "update", (RT + "test_graph_update_cost.py::test_in_place_update_and_a_new_range",)),
    Row("graph-80", "Command group updates", "a dynamic command group's active index takes effect on update",
        (G + "test_dynamic_command_group",)),
    Row("graph-81", "Node kinds", "kernel, memcpy, memset, fill, host-task and empty nodes run with their edges",
        (RT + "test_cuda_graph_fake.py::test_every_node_kind_with_edges", G + "test_basic_explicit_dag")),
    Row("graph-82", "Kernel properties", "a kernel's properties (reqd_work_group_size) hold in graph nodes as in "
        "eager submission: refused when added or recorded, and update_nd_range to a forbidden size refused",
        issue_point="30.1"),
    Row("device_global-30", "Host access", "a device_global static member is found from the host by its source "
        "name (Foo::d)", issue_point="30.11"),
)


_GR = RT + "test_graph_rules.py::"
_DD = RT + "test_device_global_declarations.py::"
_DECLS = LIT + "frontend/diagnostics/device-global-declarations.ksl"
#: the tests the fix of each point of issue 30 added
FIXED: dict[str, tuple[str, ...]] = {
    "30.1": (_GR + "test_required_work_group_size_is_refused_when_added",
             _GR + "test_update_nd_range_to_a_forbidden_size_is_refused"),
    "30.2": (_GR + "test_command_group_rules_do_not_depend_on_the_order_of_its_calls",
             _GR + "test_a_refused_command_group_after_its_dependency_leaves_no_recording"),
    "30.3": (_GR + "test_dynamic_parameter_without_a_graph_is_used_in_any_graph",
             _GR + "test_one_argument_registered_with_two_dynamic_parameters"),
    "30.4": (_GR + "test_owning_memory_is_judged_as_finalized",),
    "30.5": (_GR + "test_dynamic_command_group_of_other_commands_is_refused_when_made",),
    "30.6": (_GR + "test_verbose_print_graph_shows_arguments_and_addresses",),
    "30.7": (_DECLS, RT + "test_device_global_generator.py::test_declarations_against_the_oracle"),
    "30.8": (_DECLS,),
    "30.9": (_DD + "test_the_specs_constant_initialisers_reach_the_kernel",
             _DD + "test_struct_initialisers_read_back_from_python"),
    "30.10": (_DD + "test_properties_in_host_code",),
    "30.11": (_DD + "test_static_member_by_its_source_name",),
}
ROWS = tuple(r._replace(tests=r.tests + FIXED.get(r.issue_point, ())) for r in ROWS)
