/*
 * bench/hashflood.c -- names that flood the duplicate-name table of npzstream 0.1.0, which hashed
 * with FNV-1a from a seed (taken from the parser's address: predictable where the allocator is),
 * then a multiply-xorshift, and probed linearly from (hash & mask).
 *
 *   hashflood names N SEED      print N names "c<hex>.npy" whose hashes under that scheme and
 *                               seed all fall on table slot 0 of a 32768-slot table (so on slot
 *                               0 of every smaller table the table grows through too)
 *   hashflood old FILE          insert the names of FILE (one a line) into a table of that
 *                               scheme and print the probes it made, the cost npzstream 0.1.0
 *                               paid (bench/hashflood.py compares it with random names)
 *
 * Only the benchmark uses this; the library's table (src/zip/names.c) is keyed SipHash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t old_hash(uint32_t seed, const char *s, size_t n) {
    uint32_t h = 2166136261u ^ seed;
    for (size_t i = 0; i < n; i++) {
        h ^= (uint8_t)s[i];
        h *= 16777619u;
    }
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return h;
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "names")) {
        long want = atol(argv[2]);
        uint32_t seed = (uint32_t)strtoul(argv[3], NULL, 0);
        char name[32];
        for (uint64_t i = 0; want > 0; i++) {
            int n = snprintf(name, sizeof name, "c%llx.npy", (unsigned long long)i);
            if ((old_hash(seed, name, (size_t)n) & 32767u) == 0) {
                puts(name);
                want--;
            }
        }
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "old")) {
        FILE *f = fopen(argv[2], "r");
        if (!f) {
            perror(argv[2]);
            return 2;
        }
        size_t cap = 1u << 15, used = 0;
        uint32_t *tab = calloc(cap, sizeof *tab);
        char line[256];
        unsigned long long probes = 0;
        while (fgets(line, sizeof line, f)) {
            size_t n = strcspn(line, "\n");
            uint32_t h = old_hash(0, line, n);
            size_t i = h & (cap - 1);
            while (tab[i]) {
                i = (i + 1) & (cap - 1);
                probes++;
            }
            tab[i] = 1;
            if (++used * 4 > cap * 3) break;
        }
        printf("%llu\n", probes);
        fclose(f);
        free(tab);
        return 0;
    }
    fprintf(stderr, "usage: hashflood names N SEED | hashflood old FILE\n");
    return 2;
}
