from disksleuth.cli import main

raise SystemExit(main())
