"""smacv2.env.starcraft2 (EPyMARL imports the wrapper from smacv2.env.starcraft2.wrapper)."""
