from cclab.cli import main

raise SystemExit(main())
