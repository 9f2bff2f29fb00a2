/* Subcommands of the gomoku program: each takes (argc, argv) with argv[0]
 * the subcommand name and returns the process exit status (0 ok, 1
 * failure, 2 usage error). One file per subcommand in cli/. */
#ifndef GZ_CLI_CMDS_H
#define GZ_CLI_CMDS_H

int cmd_rules(int argc, char **argv);
int cmd_records(int argc, char **argv);
int cmd_play(int argc, char **argv);
int cmd_match(int argc, char **argv);
int cmd_selfplay(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_device(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_worker(int argc, char **argv);
int cmd_pbrain(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* Benchmarks behind `gomoku bench KIND`; each prints JSON lines. */
int bench_rules(int argc, char **argv);
int bench_nn(int argc, char **argv);
int bench_mcts(int argc, char **argv);
int bench_selfplay(int argc, char **argv);
int bench_train(int argc, char **argv);
int bench_vcf(int argc, char **argv);
int bench_vct(int argc, char **argv);
int bench_broker(int argc, char **argv);

#endif
