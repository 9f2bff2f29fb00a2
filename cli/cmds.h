/* Subcommands of the gomoku program: each takes (argc, argv) with argv[0]
 * the subcommand name and returns the process exit status (0 ok, 1
 * failure, 2 usage error). One file per subcommand in cli/. */
#ifndef GZ_CLI_CMDS_H
#define GZ_CLI_CMDS_H

typedef int cmd_fn(int argc, char **argv);

cmd_fn cmd_rules, cmd_records, cmd_play, cmd_match, cmd_selfplay, cmd_model, cmd_bench,
    cmd_device, cmd_train, cmd_worker, cmd_pbrain, cmd_serve, cmd_calibrate, cmd_analyze;

#endif
