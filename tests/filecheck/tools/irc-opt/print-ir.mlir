// The IR is printed to stderr around passes, with mlir-opt's headers. stderr comes
// first below because irc-opt writes its output at the end.

// RUN: irc-opt %s -p dce,cse --mlir-print-ir-before-all --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=ALL
// ALL:       // -----// IR Dump Before DCE (dce) //----- //
// ALL-NEXT:  builtin.module {
// ALL:       // -----// IR Dump After DCE (dce) //----- //
// ALL:       // -----// IR Dump Before CSE (cse) //----- //
// ALL:         %b = nn.relu %x
// ALL:       // -----// IR Dump After CSE (cse) //----- //
// ALL-NOT:     %b = nn.relu %x
// ALL:       builtin.module {

// Only after the passes that changed the IR: here `dce` finds nothing dead.
// RUN: irc-opt %s -p dce,cse --mlir-print-ir-after-change 2>&1 | FileCheck %s --check-prefix=CHANGE
// CHANGE-NOT: IR Dump After DCE
// CHANGE:     // -----// IR Dump After CSE (cse) //----- //
// CHANGE-NEXT: builtin.module {
// CHANGE-NEXT:   func.func @duplicate
// CHANGE-NEXT:     %a = nn.relu %x
// CHANGE-NEXT:     %sum = nn.add %a, %a

// Nothing is dumped after a pass that succeeds, with --mlir-print-ir-after-failure;
// irc's own tests show the dump after a failing pass (tests/test_opt_cli.py).
// RUN: irc-opt %s -p dce,cse --mlir-print-ir-after-failure 2>&1 | FileCheck %s --check-prefix=FAILURE
// FAILURE-NOT: IR Dump
// FAILURE:     builtin.module {

func.func @duplicate(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = nn.relu %x : tensor<4xf32>
  %b = nn.relu %x : tensor<4xf32>
  %sum = nn.add %a, %b : tensor<4xf32>
  func.return %sum : tensor<4xf32>
}
