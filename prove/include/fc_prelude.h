/* prove/include/fc_prelude.h -- included before every analysed source: Frama-C 25 parses no
 * _Alignas (src/policy.h aligns a policy arena's blocks, which no analysed source uses). */
#define _Alignas(x)
