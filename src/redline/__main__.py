from redline.cli import main

raise SystemExit(main())
