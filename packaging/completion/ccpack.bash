# bash completion for ccpack. Installed as share/bash-completion/completions/ccpack.
# The lists below must name every subcommand and option that `ccpack --help` and `ccpack CMD --help` print;
# tests/cli/suites/package_test.sh checks that they do.

_ccpack() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local prev=${COMP_WORDS[COMP_CWORD-1]}
  local commands="create restore run env verify inspect import keygen sign fingerprint check push pull ls purge status merge"
  local common="-h --help -j --jobs -q --quiet --json"
  local cmd="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      -*) ;;
      *) cmd=${COMP_WORDS[i]}; break ;;
    esac
  done

  # Values: folders, files, or nothing to suggest.
  case $prev in
    --inductor-dir|--triton-dir)
      COMPREPLY=($(compgen -d -- "$cur")); return ;;
    -o|--output|--fingerprint|--sign-key|--cosign-key|--trust|--out|--python|--ca-file|--authfile)
      COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --on-mismatch)
      COMPREPLY=($(compgen -W "refuse force purge" -- "$cur")); return ;;
    --level)
      COMPREPLY=($(compgen -W "default max" -- "$cur")); return ;;
    --cosign-format)
      COMPREPLY=($(compgen -W "legacy bundle both" -- "$cur")); return ;;
    -j|--jobs|--add|--map|--note|--ignore|--image-tag)
      return ;;
  esac

  local opts
  case $cmd in
    "") COMPREPLY=($(compgen -W "$commands -h --help --version" -- "$cur")); return ;;
    create) opts="-o --output --inductor-dir --triton-dir --add --level --sign-key --note --python --settle --settle-timeout --no-tuned-settings --since-restore $common" ;;
    restore) opts="-v --verbose --inductor-dir --triton-dir --add --durable --at-build-paths --print-env --no-relocate --trust
                   --allow-unsigned --python --ignore --on-mismatch --fingerprint --select --plain-http --ca-file --authfile
                   --registries-conf --require-cosign --cosign-identity $common" ;;
    run) opts="-v --verbose --inductor-dir --triton-dir --add --durable --at-build-paths --no-relocate --trust
               --allow-unsigned --python --ignore --on-mismatch --fingerprint --select --plain-http --ca-file --authfile
               --registries-conf --require-cosign --cosign-identity --cold-on-failure -h --help -j --jobs -q --quiet" ;;
    env) opts="--inductor-dir --triton-dir --add --at-build-paths --trust --allow-unsigned --require-cosign --cosign-identity --python --fingerprint
               --select --plain-http --ca-file --authfile --registries-conf $common" ;;
    verify) opts="--trust --allow-unsigned $common" ;;
    inspect) opts="--files --card --trust $common" ;;
    import) opts="-o --output --map --fingerprint --sign-key --note $common" ;;
    keygen) opts="--out $common" ;;
    sign) opts="--sign-key --note --trust --allow-unsigned $common" ;;
    fingerprint) opts="--python --inductor-dir --triton-dir --add $common" ;;
    check) opts="--python --ignore --inductor-dir --triton-dir --add --fingerprint --select --plain-http --ca-file --authfile --registries-conf $common" ;;
    purge) opts="--inductor-dir --triton-dir --add --python --dry-run --lock-timeout $common" ;;
    status) opts="--inductor-dir --triton-dir --add --python --ignore --verify --max-compiled $common" ;;
    merge) opts="-o --output --deltas-from-registry --trust --allow-unsigned --sign-key --note --plain-http --ca-file --authfile
                 --registries-conf $common" ;;
    push) opts="--index --as-image --image-tag --delta --plain-http --ca-file --authfile --allow-unsigned --sign-key --cosign-key --cosign-format $common" ;;
    pull) opts="-o --output --trust --require-cosign --cosign-identity --plain-http --ca-file --authfile --registries-conf --fingerprint --select $common" ;;
    ls) opts="--plain-http --ca-file --authfile --registries-conf $common" ;;
    *) return ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))  # archives and foreign tarballs
  fi
}
complete -o filenames -F _ccpack ccpack
